// `nnergy profile`: the flags. The campaign runs in the LibTorch plugin (profile/profile_session.h
// through torch_plugin.h).
#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>

#include "command.h"
#include "nnergy/core/error.h"
#include "nnergy/core/signals.h"
#include "nnergy/core/text.h"
#include "nnergy/measure/clock_control.h"
#include "nnergy/measure/cuda_device_mapping.h"
#include "torch_plugin.h"

namespace nnergy::cli {

namespace {

struct ProfileOptions {
  std::string models;
  std::string networks;
  std::string modes = "inference";
  std::string gpu;
  std::string device;
  std::string db;
  std::optional<double> min_time_s;
  int repeats = 3;
  std::string dtype = "fp32";
  bool tf32 = false;
  std::int64_t batch = 1;
  std::string shard = "1/1";
  bool dry_run = false;
  std::string whitelist;
  int threads = 0;
  std::string clocks_mhz;
};

// Set by SIGINT/SIGTERM; the campaign reads it between steps.
std::atomic<bool> g_stop{false};
static_assert(std::atomic<bool>::is_always_lock_free);

void request_stop(int) { g_stop.store(true); }

// --gpu N|cuda:N, or the older --device cpu|cuda:N → the CUDA ordinal; empty: the CPU.
std::optional<int> cuda_device(const ProfileOptions& o) {
  if (!o.gpu.empty()) {
    if (const std::optional<int> index = measure::parse_cuda_ordinal(o.gpu)) return index;
    throw InvalidInput(
        fmt::format("--gpu '{}': expected N or cuda:N, a CUDA device ordinal", o.gpu));
  }
  if (o.device.empty() || o.device == "cpu") return std::nullopt;
  if (o.device == "cuda") return 0;
  if (o.device.rfind("cuda:", 0) == 0) {
    if (const std::optional<int> index = measure::parse_cuda_ordinal(o.device)) return index;
  }
  throw InvalidInput(fmt::format("--device '{}': expected cpu or cuda:N", o.device));
}

profile::ProfileRequest to_request(const ProfileOptions& o, const std::string& command_line) {
  if (!o.gpu.empty() && !o.device.empty())
    throw InvalidInput("--gpu and --device: give the GPU with --gpu only");
  if (o.models.empty() == o.networks.empty()) {
    throw InvalidInput(
        "--models or --networks: give exactly one (--networks also measures each whole network)");
  }
  profile::ProfileRequest r;
  r.names = SettingNames::kFlag;
  r.command_line = command_line;
  r.models = split_trimmed(o.models.empty() ? o.networks : o.models, ',');
  r.measure_networks = !o.networks.empty();
  r.modes = o.modes;
  r.cuda_device = cuda_device(o);
  r.db = o.db;
  r.min_time_s = o.min_time_s;
  r.repeats = o.repeats;
  r.dtype = o.dtype;
  r.tf32 = o.tf32;
  r.batch = o.batch;
  r.shard = dataset::Shard::parse(o.shard, "--shard");
  r.dry_run = o.dry_run;
  if (!o.whitelist.empty()) r.whitelist = graph::Whitelist::parse(o.whitelist, "--whitelist");
  r.threads = o.threads;
  r.clocks_mhz = measure::parse_clock_list(o.clocks_mhz, "--clocks-mhz");
  return r;
}

CommandResult run_profile(const ProfileOptions& o, const std::string& command_line) {
  const profile::ProfileRequest request = to_request(o, command_line);
  const TorchPluginApi& plugin = torch_plugin();
  const bool tty = isatty(STDERR_FILENO) != 0;
  profile::ProfileHooks hooks;
  hooks.stop = &g_stop;
  hooks.progress = [tty](const std::string& line, bool finished) {
    // On a terminal the line is rewritten in place; the escape clears what a longer one left.
    if (tty) {
      std::fprintf(stderr, "\r%s\x1b[K%s", line.c_str(), finished ? "\n" : "");
    } else {
      std::fprintf(stderr, "%s\n", line.c_str());
    }
    std::fflush(stderr);
  };
  profile::ProfileResult result;
  {
    // The campaign stops between measurements on SIGINT/SIGTERM. A clock lock taken inside
    // installs its own scope (reset the clocks, then pass the signal on to this one).
    g_stop.store(false);
    const SignalScope stop_on_signal({SIGINT, SIGTERM}, request_stop);
    result = plugin.run_profile(request, hooks);
  }
  if (result.summary.interrupted) {
    std::fprintf(stderr, "nnergy: interrupted: the measurement in flight was discarded\n");
    return {plugin.render_profile(result), 130};
  }
  return {plugin.render_profile(result), 0};
}

}  // namespace

void add_profile_command(CLI::App& app, CommandRun* selected, const std::string& command_line) {
  auto o = std::make_shared<ProfileOptions>();
  CLI::App* cmd = app.add_subcommand(
      "profile", "Measure the unique operations of networks into a SQLite dataset (resumable)");
  cmd->add_option("--models", o->models, "comma-separated zoo names or .onnx paths");
  cmd->add_option("--networks", o->networks,
                  "as --models, and also measure each whole network (for `dataset validate`)");
  cmd->add_option("--modes", o->modes, "comma-separated: inference, training")
      ->capture_default_str();
  cmd->add_option("--gpu", o->gpu,
                  "measure on this CUDA device, N or cuda:N (needs a CUDA LibTorch and NVML; "
                  "Debian's LibTorch is CPU-only); default: the CPU");
  cmd->add_option("--device", o->device, "older spelling of the device: cpu or cuda:N");
  cmd->add_option("--db", o->db, "SQLite dataset file (created when missing)");
  cmd->add_option("--min-time-s", o->min_time_s,
                  "minimum duration of one measurement, s (default: 1 on CUDA, 0.2 on the CPU)");
  cmd->add_option("--repeats", o->repeats, "measurements per op")->capture_default_str();
  cmd->add_option("--dtype", o->dtype, "fp32, bf16, or fp16 (CUDA only)")->capture_default_str();
  cmd->add_flag("--tf32", o->tf32,
                "CUDA, fp32: allow TF32 tensor-core math in matmuls and convolutions (recorded as "
                "dtype tf32); without it both are strict fp32");
  cmd->add_option("--batch", o->batch, "samples per iteration (binds the batch dimension)")
      ->capture_default_str();
  cmd->add_option("--shard", o->shard, "I/N: measure only shard I of N")->capture_default_str();
  cmd->add_flag("--dry-run", o->dry_run, "list what would be measured and the estimated duration");
  cmd->add_option("--whitelist", o->whitelist,
                  "comma-separated ONNX op types to measure (default: the standard whitelist)");
  cmd->add_option("--threads", o->threads, "LibTorch CPU threads (default: number of cores)");
  cmd->add_option("--clocks-mhz", o->clocks_mhz,
                  "CUDA: comma-separated core clocks to lock, MHz, one after the other; 0 or "
                  "'default' = the unlocked default clock (locking needs root)");
  cmd->callback([o, selected, command_line] {
    *selected = [o, command_line] { return run_profile(*o, command_line); };
  });
}

}  // namespace nnergy::cli
