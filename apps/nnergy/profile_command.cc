// `nnergy profile`: the flags. The campaign runs in the LibTorch plugin (profile/profile_session.h
// through torch_plugin.h).
#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "command.h"
#include "nnergy/core/error.h"
#include "nnergy/core/signals.h"
#include "nnergy/core/text.h"
#include "nnergy/fleet/sbatch_campaign.h"
#include "nnergy/fleet/slurm_environment.h"
#include "nnergy/measure/clock_control.h"
#include "nnergy/measure/cuda_device_mapping.h"
#include "nnergy/measure/nvml_library.h"
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
  std::string sbatch;  ///< directory for the Slurm scripts; empty: run here
  int sbatch_tasks = 0;
  std::vector<std::string> sbatch_options;
  bool shard_given = false;
};

// Set by SIGINT/SIGTERM; the campaign reads it between steps.
std::atomic<bool> g_stop{false};
static_assert(std::atomic<bool>::is_always_lock_free);

void request_stop(int) { g_stop.store(true); }

// Makes the GPU with NVML index `index` CUDA's device 0 of this process (its UUID in
// CUDA_VISIBLE_DEVICES, which the campaign maps back to NVML), before CUDA is initialised.
void use_gpu_by_uuid(const std::string& uuid) {
  if (setenv("CUDA_VISIBLE_DEVICES", uuid.c_str(), 1) != 0) {
    throw RuntimeFailure("setenv(CUDA_VISIBLE_DEVICES) failed");
  }
}

// --gpu auto: the first GPU Slurm allotted (SLURM_STEP_GPUS, else SLURM_JOB_GPUS), by NVML index;
// CUDA_VISIBLE_DEVICES is not used, since task/cgroup renumbers it from 0 and NVML ignores it.
int use_slurm_gpu() {
  const std::vector<unsigned int> gpus =
      fleet::slurm_gpu_indices(fleet::process_environment(), "--gpu auto");
  if (gpus.empty()) {
    throw InvalidInput(
        "--gpu auto: neither SLURM_STEP_GPUS nor SLURM_JOB_GPUS is set: run inside a Slurm job "
        "that asked for a GPU (--gres=gpu:1), or give --gpu N or a GPU UUID");
  }
  const measure::NvmlLoadResult nvml = measure::NvmlLibrary::load();
  if (!nvml.library) throw DeviceError("--gpu auto: NVML: " + nvml.unavailable_reason);
  use_gpu_by_uuid(nvml.library->uuid(nvml.library->gpu(gpus.front())));
  return 0;
}

// --gpu N|cuda:N|auto|GPU-UUID, or the older --device cpu|cuda:N → the CUDA ordinal; empty: the
// CPU.
std::optional<int> cuda_device(const ProfileOptions& o) {
  if (o.gpu == "auto") return use_slurm_gpu();
  if (o.gpu.rfind("GPU-", 0) == 0) {
    use_gpu_by_uuid(o.gpu);
    return 0;
  }
  if (!o.gpu.empty()) {
    if (const std::optional<int> index = measure::parse_cuda_ordinal(o.gpu)) return index;
    throw InvalidInput(fmt::format(
        "--gpu '{}': expected N or cuda:N (a CUDA device ordinal), a GPU UUID (GPU-...), or auto "
        "(the GPU Slurm allotted)",
        o.gpu));
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
  r.shard = o.shard == "auto"
                ? fleet::shard_from_slurm(fleet::process_environment(), "--shard auto")
                : dataset::Shard::parse(o.shard, "--shard");
  r.dry_run = o.dry_run;
  if (!o.whitelist.empty()) r.whitelist = graph::Whitelist::parse(o.whitelist, "--whitelist");
  r.threads = o.threads;
  r.clocks_mhz = measure::parse_clock_list(o.clocks_mhz, "--clocks-mhz");
  return r;
}

// The flags every array task repeats: those of `o` that shape the measurements.
std::vector<std::string> task_arguments(const ProfileOptions& o) {
  std::vector<std::string> a;
  auto add = [&a](const std::string& flag, const std::string& value) {
    a.push_back(flag);
    a.push_back(value);
  };
  if (!o.models.empty()) add("--models", o.models);
  if (!o.networks.empty()) add("--networks", o.networks);
  add("--modes", o.modes);
  if (o.min_time_s) add("--min-time-s", fmt::format("{}", *o.min_time_s));
  add("--repeats", std::to_string(o.repeats));
  add("--dtype", o.dtype);
  if (o.tf32) a.push_back("--tf32");
  add("--batch", std::to_string(o.batch));
  if (!o.whitelist.empty()) add("--whitelist", o.whitelist);
  if (o.threads != 0) add("--threads", std::to_string(o.threads));
  if (!o.clocks_mhz.empty()) add("--clocks-mhz", o.clocks_mhz);
  return a;
}

std::filesystem::path absolute_path(const std::string& path) {
  return std::filesystem::absolute(path).lexically_normal();
}

// --sbatch DIR: the campaign as a Slurm array and a dependent merge job; nothing is measured here.
CommandResult write_sbatch(const ProfileOptions& o) {
  if (o.db.empty()) {
    throw InvalidInput("--sbatch: give --db, the dataset the merge job writes");
  }
  if (o.sbatch_tasks < 1) {
    throw InvalidInput(fmt::format(
        "--sbatch-tasks {}: expected the number of array tasks (shards), e.g. --sbatch-tasks 8",
        o.sbatch_tasks));
  }
  if (o.shard_given && o.shard != "auto") {
    throw InvalidInput(fmt::format(
        "--shard {} with --sbatch: each array task takes its own shard; leave --shard out",
        o.shard));
  }
  if (!o.gpu.empty() && o.gpu != "auto") {
    throw InvalidInput(fmt::format(
        "--gpu {} with --sbatch: each task measures the GPU Slurm gives it; give --gpu auto",
        o.gpu));
  }
  if (!o.device.empty() && o.device != "cpu") {
    throw InvalidInput("--device with --sbatch: give --gpu auto to measure a GPU per task");
  }
  if (o.dry_run) throw InvalidInput("--dry-run with --sbatch: run the dry run without --sbatch");
  // Models given as paths must resolve from the job's working directory too.
  ProfileOptions task = o;
  auto absolute_models = [](const std::string& list) {
    std::string out;
    for (const std::string& m : split_trimmed(list, ',')) {
      const bool path = m.find('/') != std::string::npos || m.ends_with(".onnx");
      out += (out.empty() ? "" : ",") + (path ? absolute_path(m).string() : m);
    }
    return out;
  };
  if (!task.models.empty()) task.models = absolute_models(task.models);
  if (!task.networks.empty()) task.networks = absolute_models(task.networks);

  fleet::SbatchCampaign c;
  c.directory = absolute_path(o.sbatch);
  std::error_code error;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", error);
  if (error) throw RuntimeFailure("cannot read /proc/self/exe: " + error.message());
  c.nnergy = exe;
  c.profile_arguments = task_arguments(task);
  c.db = absolute_path(o.db);
  c.tasks = o.sbatch_tasks;
  c.gpu = !o.gpu.empty();
  c.sbatch_options = o.sbatch_options;
  const fleet::SbatchFiles files = fleet::write_sbatch_campaign(c);
  return {fmt::format("Slurm campaign of {} array tasks written to {}:\n  {}\n  {}\n  {}\n"
                      "Submit it with: {}\n",
                      c.tasks, c.directory.string(), files.array_script.string(),
                      files.merge_script.string(), files.submit_script.string(),
                      files.submit_script.string()),
          0};
}

CommandResult run_profile(const ProfileOptions& o, const std::string& command_line) {
  if (!o.sbatch.empty()) return write_sbatch(o);
  if (o.sbatch_tasks != 0 || !o.sbatch_options.empty()) {
    throw InvalidInput("--sbatch-tasks and --sbatch-option go with --sbatch DIR");
  }
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
                  "measure on this CUDA device, N or cuda:N, a GPU UUID (GPU-...), or auto (the "
                  "GPU Slurm allotted: SLURM_STEP_GPUS/SLURM_JOB_GPUS); needs a CUDA LibTorch and "
                  "NVML (Debian's LibTorch is CPU-only); default: the CPU");
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
  cmd->add_option("--shard", o->shard,
                  "I/N: measure only shard I of N; auto: the shard of this Slurm array task "
                  "(SLURM_ARRAY_TASK_ID/COUNT)")
      ->capture_default_str();
  cmd->add_flag("--dry-run", o->dry_run, "list what would be measured and the estimated duration");
  cmd->add_option("--whitelist", o->whitelist,
                  "comma-separated ONNX op types to measure (default: the standard whitelist)");
  cmd->add_option("--threads", o->threads, "LibTorch CPU threads (default: number of cores)");
  cmd->add_option("--clocks-mhz", o->clocks_mhz,
                  "CUDA: comma-separated core clocks to lock, MHz, one after the other; 0 or "
                  "'default' = the unlocked default clock (locking needs root)");
  cmd->add_option("--sbatch", o->sbatch,
                  "write the campaign as a Slurm job array (one shard per task, requeueable) and "
                  "a merge job into --db once all succeed, to this directory; measure nothing");
  cmd->add_option("--sbatch-tasks", o->sbatch_tasks, "with --sbatch: array tasks (shards)");
  cmd->add_option("--sbatch-option", o->sbatch_options,
                  "with --sbatch: an sbatch option for both jobs, written with '=', e.g. "
                  "--sbatch-option=--partition=gpu (repeatable)");
  cmd->callback([o, selected, command_line, cmd] {
    o->shard_given = cmd->count("--shard") > 0;
    *selected = [o, command_line] { return run_profile(*o, command_line); };
  });
}

}  // namespace nnergy::cli
