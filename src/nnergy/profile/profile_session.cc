#include "nnergy/profile/profile_session.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <nlohmann/json.hpp>
#include <thread>

#include "nnergy/core/data_directory.h"
#include "nnergy/core/error.h"
#include "nnergy/core/text.h"
#include "nnergy/core/version.h"
#include "nnergy/measure/clock_control.h"
#include "nnergy/measure/cuda_device_mapping.h"
#include "nnergy/measure/nvml_library.h"
#include "nnergy/profile/steady_allocator.h"

namespace nnergy::profile {

namespace {

std::string host_name() {
  char buffer[256] = {};
  if (gethostname(buffer, sizeof buffer - 1) != 0) return "";
  return buffer;
}

std::string device_text(const ProfileRequest& r) {
  return setting_with_value(r.names, "device",
                            r.cuda_device ? fmt::format("cuda:{}", *r.cuda_device) : "cpu");
}

CampaignOptions campaign_options(const ProfileRequest& r) {
  CampaignOptions c;
  c.cuda_device = r.cuda_device.value_or(-1);
  if (!r.cuda_device && !r.clocks_mhz.empty()) {
    throw InvalidInput(
        setting_with_value(r.names, "clocks_mhz", fmt::format("{}", fmt::join(r.clocks_mhz, ","))) +
        ": clocks cannot be locked on the cpu; leave it out");
  }
  if (r.threads < 0) {
    throw InvalidInput(setting_with_value(r.names, "threads", std::to_string(r.threads)) +
                       ": expected a positive integer");
  }
  if (r.models.empty()) {
    throw InvalidInput(
        fmt::format("{} or {}: give exactly one ({} also measures each whole network)",
                    setting_name(r.names, "models"), setting_name(r.names, "networks"),
                    setting_name(r.names, "networks")));
  }
  c.models = r.models;
  c.measure_networks = r.measure_networks;
  c.modes = parse_modes(r.modes, setting_name(r.names, "modes"));
  c.batch = r.batch;
  c.dtype = parse_campaign_dtype(r.dtype, setting_name(r.names, "dtype"));
  c.tf32 = r.tf32;
  // A GPU op is measured for at least a second (Nicolai); a CPU op is steadier and slower.
  c.min_time_s = r.min_time_s.value_or(r.cuda_device ? 1.0 : 0.2);
  c.repeats = r.repeats;
  c.clocks_mhz = r.clocks_mhz.empty() ? std::vector<std::int64_t>{0} : r.clocks_mhz;
  c.shard = r.shard;
  if (r.whitelist) c.whitelist = *r.whitelist;
  c.data_dir = data_directory();
  check_options(c);
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

// Opens the GPU of the request through NVML and checks the clocks against those it supports.
// Runs before LibTorch initialises CUDA, so that CUDA's device order can still be set.
Gpu open_gpu(const ProfileRequest& r, const CampaignOptions& c) {
  measure::use_pci_bus_order_for_cuda();
  measure::NvmlLoadResult loaded = measure::NvmlLibrary::load();
  if (!loaded.library) {
    throw DeviceError(fmt::format(
        "{}: NVML is not available ({}); a GPU campaign reads the GPU's name, clocks and power "
        "through NVML",
        device_text(r), loaded.unavailable_reason));
  }
  Gpu gpu;
  gpu.nvml = loaded.library;
  gpu.index = measure::nvml_index_of_cuda_device(*gpu.nvml, c.cuda_device);
  const unsigned int count = gpu.nvml->device_count();
  if (gpu.index >= count) {
    const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
    throw InvalidInput(fmt::format(
        "{}: NVML sees {} GPU(s), no GPU {}{}", device_text(r), count, gpu.index,
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
        "{}: GPU {} ({}) does not support a core clock of {} MHz; nearest supported: {} MHz (it "
        "lists {} clocks from {:.0f} to {:.0f} MHz)",
        setting_name(r.names, "clocks_mhz"), gpu.index, gpu.record.name, clock, mhz_list(nearest),
        supported.size(), supported.front(), supported.back()));
  }
  return gpu;
}

// Before anything is written: LibTorch must reach the GPU, and each clock to lock must be
// lockable (locking needs root), so that a campaign does not stop at its second clock.
void check_gpu_ready(const ProfileRequest& r, const Gpu& gpu, const CampaignOptions& c) {
  const int torch_devices = cuda_device_count();
  if (c.cuda_device >= torch_devices) {
    throw DeviceError(fmt::format(
        "{}: LibTorch sees {} CUDA device(s){}", device_text(r), torch_devices,
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

std::string progress_line(const CampaignProgress& p) {
  if (p.current == nullptr)
    return fmt::format("[{}/{}] done in {}", p.done, p.total, duration_text(p.elapsed_s));
  return fmt::format("[{}/{}] {} {} {} | elapsed {} | ETA {}", p.done, p.total,
                     to_string(p.current->mode), p.current->op_type, p.current->shapes,
                     duration_text(p.elapsed_s), p.done > 0 ? duration_text(p.eta_s) : "?");
}

ProfileResult result_of(const ProfileRequest& r, const CampaignOptions& c,
                        const std::optional<Gpu>& gpu) {
  ProfileResult result;
  result.db = r.db;
  result.device = gpu ? gpu->record : cpu_device();
  result.cuda_device = r.cuda_device;
  result.nvml_index = gpu ? gpu->index : 0;
  result.key_dtype = key_dtype(c);
  result.tf32 = c.tf32;
  result.cpu_threads = cpu_threads();
  result.measure_networks = c.measure_networks;
  result.repeats = c.repeats;
  result.min_time_s = c.min_time_s;
  return result;
}

ProfileResult dry_run(const ProfileRequest& r, const CampaignOptions& c,
                      const std::optional<Gpu>& gpu) {
  ProfileResult result = result_of(r, c, gpu);
  std::optional<dataset::DatasetStore> store;
  std::int64_t device_id = 0;
  if (!r.db.empty() && std::filesystem::exists(r.db)) {
    store.emplace(dataset::DatasetStore::open(r.db, dataset::OpenMode::kReadOnly));
    for (const dataset::DeviceRecord& d : store->devices()) {
      if (d.name == result.device.name && d.uuid == result.device.uuid) device_id = d.id;
    }
  }
  result.plan = plan_campaign(c, store && device_id != 0 ? &*store : nullptr, device_id);
  result.estimated_duration_s = estimated_duration_s(*result.plan, c);
  return result;
}

}  // namespace

ProfileResult run_profile(const ProfileRequest& r, const ProfileHooks& hooks) {
  CampaignOptions c = campaign_options(r);
  set_cpu_threads(r.threads > 0
                      ? r.threads
                      : std::max(1, static_cast<int>(std::thread::hardware_concurrency())));
  std::optional<Gpu> gpu;
  if (r.cuda_device) {
    gpu = open_gpu(r, c);
    c.nvml_gpu = static_cast<int>(gpu->index);
  }
  if (r.dry_run) return dry_run(r, c, gpu);
  if (r.db.empty()) {
    throw InvalidInput(fmt::format("{}: required unless {} (the SQLite dataset)",
                                   setting_name(r.names, "db"), setting_name(r.names, "dry_run")));
  }
  if (gpu) check_gpu_ready(r, *gpu, c);
  ProfileResult result = result_of(r, c, gpu);
  // Process-wide, like the thread count, and before the first tensor is allocated.
  result.host_allocator = use_steady_allocator();

  // Imported before the database is opened, so that a bad model leaves no file behind.
  std::vector<graph::Network> networks = import_networks(c);
  dataset::DatasetStore store = dataset::DatasetStore::open(r.db);
  const std::int64_t device_id = store.add_device(result.device);
  CampaignPlan plan = plan_campaign(c, std::move(networks), &store, device_id);
  for (const graph::Network& net : plan.networks) store.add_network(net, c.whitelist);

  nlohmann::ordered_json settings = {
      {"models", c.models},
      {"modes", r.modes},
      {"device", r.cuda_device ? fmt::format("cuda:{}", *r.cuda_device) : std::string("cpu")},
      {"batch", c.batch},
      {"dtype", r.dtype},
      {"key_dtype", result.key_dtype},
      {"min_time_s", c.min_time_s},
      {"repeats", c.repeats},
      {"clocks_mhz", c.clocks_mhz},
      {"shard", fmt::format("{}/{}", c.shard.index, c.shard.count)},
      {"cpu_threads", cpu_threads()}};
  settings["host_allocator"] = result.host_allocator;
  if (gpu) {
    settings["tf32"] = c.tf32;
    settings["cuda_device_order"] = std::getenv("CUDA_DEVICE_ORDER");
  }
  dataset::SessionRecord session;
  session.device_id = device_id;
  session.tool_version = kToolVersion;
  session.host = host_name();
  session.command_line = r.command_line;
  session.settings_json = settings.dump();
  const std::int64_t session_id = store.start_session(session);

  static const std::atomic<bool> kNeverStop{false};
  {
    // The lock's own SIGINT/SIGTERM handler (reset the clocks, then pass the signal on to the
    // caller's) lives as long as the lock.
    std::optional<measure::ClockLock> lock;
    ClockSetter set_clock;
    if (gpu) {
      set_clock = [&lock, &gpu](std::int64_t mhz) {
        lock.reset();
        const auto clock = static_cast<double>(mhz);
        if (mhz != 0) lock.emplace(gpu->nvml, gpu->index, clock, clock);
      };
    }
    result.summary = run_campaign(
        plan, c, store, session_id, hooks.stop ? *hooks.stop : kNeverStop,
        [&hooks](const CampaignProgress& p) {
          if (hooks.progress) hooks.progress(progress_line(p), p.current == nullptr);
        },
        set_clock);
  }
  store.end_session(session_id);
  return result;
}

std::string render_text(const ProfileResult& result) {
  if (result.plan) {
    const CampaignPlan& plan = *result.plan;
    std::string out =
        fmt::format("dry run: nothing measured, nothing written{}\n",
                    result.db.empty() ? "" : " (database " + result.db.string() + ")");
    out += fmt::format("{:<24} {:<10} {:>10} {:>14} {:>16} {:>8}\n", "network", "mode", "clock",
                       "ops to measure", "already measured", "network");
    for (const PlanCount& count : plan.counts) {
      out += fmt::format(
          "{:<24} {:<10} {:>10} {:>14} {:>16} {:>8}\n", count.network, to_string(count.mode),
          count.clock_mhz == 0 ? std::string("default") : fmt::format("{} MHz", count.clock_mhz),
          count.to_measure, count.already_measured,
          result.measure_networks ? (count.network_to_measure > 0 ? "yes" : "done") : "-");
    }
    out += fmt::format(
        "total: {} measurements to take, {} already measured, {} left to other shards\n",
        plan.pending.size(), plan.skipped, plan.other_shards);
    out +=
        fmt::format("estimated duration: {} ({} measurements x ({} repeats + 1) x {} s min time)\n",
                    duration_text(result.estimated_duration_s), plan.pending.size(), result.repeats,
                    result.min_time_s);
    return out;
  }
  const CampaignSummary& summary = result.summary;
  const dataset::DeviceRecord& device = result.device;
  std::string out = fmt::format("database: {}\n", result.db.string());
  if (result.cuda_device) {
    out += fmt::format("device: {} (cuda:{} = NVML GPU {}, {}, driver {}, {}{})\n", device.name,
                       *result.cuda_device, result.nvml_index, device.uuid, device.driver_version,
                       result.key_dtype, result.tf32 ? ": TF32 tensor cores allowed" : "");
  } else {
    out += fmt::format("device: {} (cpu, {} LibTorch threads)\n", device.name, result.cpu_threads);
  }
  out += fmt::format("measured: {}  skipped (already measured): {}  errors: {}{}\n",
                     summary.measured, summary.skipped, summary.errors,
                     summary.interrupted ? "  (interrupted; rerun the command to resume)" : "");
  out += fmt::format("wall time: {:.1f} s  measured op time: {:.1f} s  profiling overhead: {}\n",
                     summary.wall_s, summary.measured_s,
                     summary.measured > 0 ? fmt::format("{:.1f} %", 100.0 * summary.overhead())
                                          : std::string("n/a (nothing measured)"));
  if (!summary.proportionality.empty()) {
    out += "proportionality of loop time with iterations, once per op kind:\n";
    out += fmt::format("  {:<20} {:<10} {:>8} {:>16}  {}\n", "op kind", "mode", "R²",
                       "time/iteration", "op checked");
    for (const ProportionalityReport& p : summary.proportionality) {
      if (!p.error.empty()) {
        out += fmt::format("  {:<20} {:<10} failed: {}\n", p.op_type, to_string(p.mode), p.error);
        continue;
      }
      out += fmt::format("  {:<20} {:<10} {:>8.4f} {:>13.3g} s  {}\n", p.op_type, to_string(p.mode),
                         p.fit.r_squared, p.fit.slope_s, p.shapes);
    }
  }
  out += fmt::format("host memory: {}\n", result.host_allocator.empty()
                                              ? std::string("the C library's default malloc")
                                              : result.host_allocator);
  if (summary.power_sources.empty()) {
    std::string why;
    for (const std::string& a : summary.power_absent) why += (why.empty() ? "" : "; ") + a;
    out += "power and energy: not measured (no power source: " + why + ")\n";
  } else {
    out += "power and energy: measured with " + join_with_commas(summary.power_sources) + "\n";
  }
  return out;
}

}  // namespace nnergy::profile
