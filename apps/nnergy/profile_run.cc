// `nnergy profile`: measures the unique operations of networks into a SQLite dataset. Runs inside
// the LibTorch plugin (torch_plugin.h); profile_command.cc parses the flags.
#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "command.h"
#include "nnergy/core/data_directory.h"
#include "nnergy/core/error.h"
#include "nnergy/core/version.h"
#include "nnergy/dataset/dataset_store.h"
#include "nnergy/measure/clock_control.h"
#include "nnergy/measure/cuda_device_mapping.h"
#include "nnergy/measure/nvml_library.h"
#include "nnergy/profile/campaign.h"
#include "nnergy/profile/steady_allocator.h"
#include "profile_options.h"

namespace nnergy::cli {

namespace {

// Set by SIGINT/SIGTERM; the campaign reads it between steps.
std::atomic<bool> g_stop{false};
static_assert(std::atomic<bool>::is_always_lock_free);

void request_stop(int) { g_stop.store(true); }

// Installs the stop handler for the campaign's duration and restores the previous ones.
class StopOnSignal {
 public:
  StopOnSignal() {
    g_stop.store(false);
    struct sigaction action {};
    action.sa_handler = request_stop;
    sigemptyset(&action.sa_mask);
    sigaction(SIGINT, &action, &previous_[0]);
    sigaction(SIGTERM, &action, &previous_[1]);
  }
  ~StopOnSignal() {
    sigaction(SIGINT, &previous_[0], nullptr);
    sigaction(SIGTERM, &previous_[1], nullptr);
  }
  StopOnSignal(const StopOnSignal&) = delete;
  StopOnSignal& operator=(const StopOnSignal&) = delete;

 private:
  struct sigaction previous_[2]{};
};

std::string host_name() {
  char buffer[256] = {};
  if (gethostname(buffer, sizeof buffer - 1) != 0) return "";
  return buffer;
}

std::vector<std::string> split_models(const std::string& text) {
  std::vector<std::string> models;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = text.find(',', start);
    models.push_back(text.substr(start, comma == std::string::npos ? comma : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return models;
}

std::string duration_text(double s) {
  if (s < 60) return fmt::format("{:.0f} s", s);
  if (s < 3600) return fmt::format("{:.0f} min {:02.0f} s", std::floor(s / 60), std::fmod(s, 60));
  return fmt::format("{:.0f} h {:02.0f} min", std::floor(s / 3600), std::fmod(s, 3600) / 60);
}

// "cuda:N" (or "cuda", device 0) → N; "cpu" → -1.
int parse_device(const std::string& device) {
  if (device == "cpu") return -1;
  if (device == "cuda") return 0;
  if (device.rfind("cuda:", 0) == 0) {
    if (const std::optional<int> index = measure::parse_cuda_ordinal(device)) return *index;
  }
  throw InvalidInput(fmt::format("--device '{}': expected cpu or cuda:N", device));
}

// "900,1200,default" → {900, 1200, 0}; empty text → {0}.
std::vector<std::int64_t> parse_clocks(const std::string& text) {
  if (text.empty()) return {0};
  std::vector<std::int64_t> clocks;
  for (const std::string& item : split_models(text)) {
    if (item == "default") {
      clocks.push_back(0);
      continue;
    }
    if (item.empty() || item.size() > 6 ||
        !std::all_of(item.begin(), item.end(), [](char ch) { return ch >= '0' && ch <= '9'; })) {
      throw InvalidInput(fmt::format(
          "--clocks-mhz {}: '{}' is not a clock; expected MHz as whole numbers, or 'default'", text,
          item));
    }
    clocks.push_back(std::stoll(item));
  }
  return clocks;
}

profile::CampaignOptions campaign_options(const ProfileOptions& o) {
  profile::CampaignOptions c;
  c.cuda_device = parse_device(o.device);
  if (c.cuda_device < 0 && !o.clocks_mhz.empty()) {
    throw InvalidInput(
        fmt::format("--clocks-mhz {}: clocks cannot be locked on --device cpu; leave the flag out",
                    o.clocks_mhz));
  }
  if (o.threads < 0) {
    throw InvalidInput(fmt::format("--threads {}: expected a positive integer", o.threads));
  }
  if (o.models.empty() == o.networks.empty()) {
    throw InvalidInput(
        "--models or --networks: give exactly one (--networks also measures each whole network)");
  }
  c.models = split_models(o.models.empty() ? o.networks : o.models);
  c.measure_networks = !o.networks.empty();
  c.modes = profile::parse_modes(o.modes, "--modes");
  c.batch = o.batch;
  c.dtype = profile::parse_campaign_dtype(o.dtype, "--dtype");
  c.tf32 = o.tf32;
  // Seed 000 §4.2 measures GPU ops for at least a second; a CPU op is steadier and slower.
  c.min_time_s = std::isnan(o.min_time_s) ? (c.cuda_device >= 0 ? 1.0 : 0.2) : o.min_time_s;
  c.repeats = o.repeats;
  c.clocks_mhz = parse_clocks(o.clocks_mhz);
  c.shard = dataset::Shard::parse(o.shard, "--shard");
  if (!o.whitelist.empty()) c.whitelist = graph::Whitelist::parse(o.whitelist, "--whitelist");
  c.data_dir = data_directory();
  profile::check_options(c);
  return c;
}

// A CUDA campaign's GPU as NVML sees it: its identity for the dataset and its clocks.
struct Gpu {
  std::shared_ptr<measure::NvmlLibrary> nvml;
  unsigned int index = 0;
  dataset::DeviceRecord record;
};

std::string mhz_list(const std::vector<double>& clocks) {
  std::string text;
  for (double c : clocks) text += (text.empty() ? "" : ", ") + fmt::format("{:.0f}", c);
  return text;
}

// Opens the GPU of `c.cuda_device` through NVML and checks the clocks against those it supports.
// Runs before LibTorch initialises CUDA, so that CUDA's device order can still be set.
Gpu open_gpu(const profile::CampaignOptions& c) {
  measure::use_pci_bus_order_for_cuda();
  measure::NvmlLoadResult loaded = measure::NvmlLibrary::load();
  if (!loaded.library) {
    throw DeviceError(
        fmt::format("--device cuda:{}: NVML is not available ({}); a GPU campaign "
                    "reads the GPU's name, clocks and power through NVML",
                    c.cuda_device, loaded.unavailable_reason));
  }
  Gpu gpu;
  gpu.nvml = loaded.library;
  gpu.index = measure::nvml_index_of_cuda_device(*gpu.nvml, c.cuda_device);
  const unsigned int count = gpu.nvml->device_count();
  if (gpu.index >= count) {
    const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
    throw InvalidInput(fmt::format(
        "--device cuda:{}: NVML sees {} GPU(s), no GPU {}{}", c.cuda_device, count, gpu.index,
        visible != nullptr ? fmt::format(" (CUDA_VISIBLE_DEVICES={})", visible) : std::string()));
  }
  const measure::NvmlGpu handle = gpu.nvml->gpu(gpu.index);
  gpu.record.name = gpu.nvml->name(handle);
  gpu.record.uuid = gpu.nvml->uuid(handle);
  gpu.record.kind = "cuda";
  gpu.record.driver_version = gpu.nvml->driver_version();
  const std::vector<double> supported = measure::supported_core_clocks_mhz(*gpu.nvml, gpu.index);
  for (std::int64_t clock : c.clocks_mhz) {
    // A GPU that lists no clocks (many consumer GPUs) is left to refuse the lock itself.
    if (clock == 0 || supported.empty()) continue;
    if (std::find(supported.begin(), supported.end(), static_cast<double>(clock)) !=
        supported.end()) {
      continue;
    }
    std::vector<double> nearest = supported;
    std::sort(nearest.begin(), nearest.end(), [clock](double a, double b) {
      return std::abs(a - static_cast<double>(clock)) < std::abs(b - static_cast<double>(clock));
    });
    nearest.resize(std::min<std::size_t>(nearest.size(), 3));
    std::sort(nearest.begin(), nearest.end());
    throw InvalidInput(fmt::format(
        "--clocks-mhz: GPU {} ({}) does not support a core clock of {} MHz; nearest supported: "
        "{} MHz (it lists {} clocks from {:.0f} to {:.0f} MHz)",
        gpu.index, gpu.record.name, clock, mhz_list(nearest), supported.size(), supported.front(),
        supported.back()));
  }
  return gpu;
}

// Before anything is written: LibTorch must reach the GPU, and each clock to lock must be
// lockable (locking needs root), so that a campaign does not stop at its second clock.
void check_gpu_ready(const Gpu& gpu, const profile::CampaignOptions& c) {
  const int torch_devices = profile::cuda_device_count();
  if (c.cuda_device >= torch_devices) {
    throw DeviceError(fmt::format(
        "--device cuda:{}: LibTorch sees {} CUDA device(s){}", c.cuda_device, torch_devices,
        torch_devices == 0 ? "; this nnergy was built against a LibTorch without CUDA (Debian's "
                             "libtorch is CPU-only): build it with a CUDA LibTorch "
                             "(README, \"Profiling on a GPU\")"
                           : ""));
  }
  for (std::int64_t clock : c.clocks_mhz) {
    if (clock == 0) continue;
    const auto mhz = static_cast<double>(clock);
    measure::ClockLock probe(gpu.nvml, gpu.index, mhz, mhz);
    probe.reset();
  }
}

std::string plan_text(const profile::CampaignPlan& plan, const profile::CampaignOptions& c,
                      const std::string& db) {
  std::string out = fmt::format("dry run: nothing measured, nothing written{}\n",
                                db.empty() ? "" : " (database " + db + ")");
  out += fmt::format("{:<24} {:<10} {:>10} {:>14} {:>16} {:>8}\n", "network", "mode", "clock",
                     "ops to measure", "already measured", "network");
  for (const profile::PlanCount& count : plan.counts) {
    out += fmt::format(
        "{:<24} {:<10} {:>10} {:>14} {:>16} {:>8}\n", count.network, profile::to_string(count.mode),
        count.clock_mhz == 0 ? std::string("default") : fmt::format("{} MHz", count.clock_mhz),
        count.to_measure, count.already_measured,
        c.measure_networks ? (count.network_to_measure > 0 ? "yes" : "done") : "-");
  }
  out +=
      fmt::format("total: {} measurements to take, {} already measured, {} left to other shards\n",
                  plan.pending.size(), plan.skipped, plan.other_shards);
  out +=
      fmt::format("estimated duration: {} ({} measurements x ({} repeats + 1) x {} s min time)\n",
                  duration_text(profile::estimated_duration_s(plan, c)), plan.pending.size(),
                  c.repeats, c.min_time_s);
  return out;
}

void show_progress(const profile::CampaignProgress& p, bool tty) {
  std::string line;
  if (p.current != nullptr) {
    line = fmt::format("[{}/{}] {} {} {} | elapsed {} | ETA {}", p.done, p.total,
                       profile::to_string(p.current->mode), p.current->op_type, p.current->shapes,
                       duration_text(p.elapsed_s), p.done > 0 ? duration_text(p.eta_s) : "?");
  } else {
    line = fmt::format("[{}/{}] done in {}", p.done, p.total, duration_text(p.elapsed_s));
  }
  if (tty) {
    // Whole line rewritten in place; the escape clears what a longer previous line left.
    std::fprintf(stderr, "\r%s\x1b[K%s", line.c_str(), p.current == nullptr ? "\n" : "");
  } else {
    std::fprintf(stderr, "%s\n", line.c_str());
  }
  std::fflush(stderr);
}

}  // namespace

CommandResult run_profile(const ProfileOptions& o, const std::string& command_line) {
  profile::CampaignOptions c = campaign_options(o);
  profile::set_cpu_threads(
      o.threads > 0 ? o.threads
                    : std::max(1, static_cast<int>(std::thread::hardware_concurrency())));
  std::optional<Gpu> gpu;
  if (c.cuda_device >= 0) {
    gpu = open_gpu(c);
    c.nvml_gpu = static_cast<int>(gpu->index);
  }
  const dataset::DeviceRecord device = gpu ? gpu->record : profile::cpu_device();

  if (o.dry_run) {
    std::optional<dataset::DatasetStore> store;
    std::int64_t device_id = 0;
    if (!o.db.empty() && std::filesystem::exists(o.db)) {
      store.emplace(dataset::DatasetStore::open(o.db, dataset::OpenMode::kReadOnly));
      for (const dataset::DeviceRecord& d : store->devices()) {
        if (d.name == device.name && d.uuid == device.uuid) device_id = d.id;
      }
    }
    const profile::CampaignPlan plan =
        plan_campaign(c, store && device_id != 0 ? &*store : nullptr, device_id);
    return {plan_text(plan, c, o.db), 0};
  }
  if (o.db.empty()) throw InvalidInput("--db: required unless --dry-run (the SQLite dataset)");
  if (gpu) check_gpu_ready(*gpu, c);
  // Process-wide, like the thread count, and before the first tensor is allocated.
  const std::string host_allocator = profile::use_steady_allocator();

  // Imported before the database is opened, so that a bad model leaves no file behind.
  std::vector<graph::Network> networks = profile::import_networks(c);
  dataset::DatasetStore store = dataset::DatasetStore::open(o.db);
  const std::int64_t device_id = store.add_device(device);
  profile::CampaignPlan plan = plan_campaign(c, std::move(networks), &store, device_id);
  for (const graph::Network& net : plan.networks) store.add_network(net, c.whitelist);

  nlohmann::ordered_json settings = {{"models", c.models},
                                     {"modes", o.modes},
                                     {"device", o.device},
                                     {"batch", c.batch},
                                     {"dtype", o.dtype},
                                     {"key_dtype", profile::key_dtype(c)},
                                     {"min_time_s", c.min_time_s},
                                     {"repeats", c.repeats},
                                     {"clocks_mhz", c.clocks_mhz},
                                     {"shard", o.shard},
                                     {"cpu_threads", profile::cpu_threads()}};
  settings["host_allocator"] = host_allocator;
  if (gpu) {
    settings["tf32"] = c.tf32;
    settings["cuda_device_order"] = std::getenv("CUDA_DEVICE_ORDER");
  }
  dataset::SessionRecord session;
  session.device_id = device_id;
  session.tool_version = kToolVersion;
  session.host = host_name();
  session.command_line = command_line;
  session.settings_json = settings.dump();
  const std::int64_t session_id = store.start_session(session);

  const bool tty = isatty(STDERR_FILENO) != 0;
  profile::CampaignSummary summary;
  {
    StopOnSignal stop_on_signal;
    // Declared after the stop handler, so that the lock's own SIGINT/SIGTERM handler (reset the
    // clocks, then pass the signal on to the stop handler) runs first, and destroyed before it.
    std::optional<measure::ClockLock> lock;
    profile::ClockSetter set_clock;
    if (gpu) {
      set_clock = [&lock, &gpu](std::int64_t mhz) {
        lock.reset();
        const auto clock = static_cast<double>(mhz);
        if (mhz != 0) lock.emplace(gpu->nvml, gpu->index, clock, clock);
      };
    }
    summary = profile::run_campaign(
        plan, c, store, session_id, g_stop,
        [tty](const profile::CampaignProgress& p) { show_progress(p, tty); }, set_clock);
  }
  store.end_session(session_id);

  std::string out;
  out += fmt::format("database: {}\n", o.db);
  if (gpu) {
    out += fmt::format("device: {} (cuda:{} = NVML GPU {}, {}, driver {}, {}{})\n", device.name,
                       c.cuda_device, gpu->index, device.uuid, device.driver_version,
                       profile::key_dtype(c), c.tf32 ? ": TF32 tensor cores allowed" : "");
  } else {
    out +=
        fmt::format("device: {} (cpu, {} LibTorch threads)\n", device.name, profile::cpu_threads());
  }
  out += fmt::format("measured: {}  skipped (already measured): {}  errors: {}{}\n",
                     summary.measured, summary.skipped, summary.errors,
                     summary.interrupted ? "  (interrupted; rerun the command to resume)" : "");
  out += fmt::format("wall time: {:.1f} s  measured op time: {:.1f} s  profiling overhead: {}\n",
                     summary.wall_s, summary.measured_s,
                     summary.measured > 0 ? fmt::format("{:.1f} %", 100.0 * summary.overhead())
                                          : std::string("n/a (nothing measured)"));
  if (!summary.proportionality.empty()) {
    out += "proportionality of loop time with iterations (seed 000 §4.2.3), once per op kind:\n";
    out += fmt::format("  {:<20} {:<10} {:>8} {:>16}  {}\n", "op kind", "mode", "R²",
                       "time/iteration", "op checked");
    for (const profile::ProportionalityReport& r : summary.proportionality) {
      if (!r.error.empty()) {
        out += fmt::format("  {:<20} {:<10} failed: {}\n", r.op_type, profile::to_string(r.mode),
                           r.error);
        continue;
      }
      out += fmt::format("  {:<20} {:<10} {:>8.4f} {:>13.3g} s  {}\n", r.op_type,
                         profile::to_string(r.mode), r.fit.r_squared, r.fit.slope_s, r.shapes);
    }
  }
  out += fmt::format("host memory: {}\n", host_allocator.empty()
                                              ? std::string("the C library's default malloc")
                                              : host_allocator);
  if (summary.power_sources.empty()) {
    std::string why;
    for (const std::string& a : summary.power_absent) why += (why.empty() ? "" : "; ") + a;
    out += "power and energy: not measured (no power source: " + why + ")\n";
  } else {
    out += "power and energy: measured with " + join_with_commas(summary.power_sources) + "\n";
  }
  if (summary.interrupted) {
    std::fprintf(stderr, "nnergy: interrupted: the measurement in flight was discarded\n");
    return {out, 130};
  }
  return {out, 0};
}

}  // namespace nnergy::cli
