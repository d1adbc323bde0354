// nnergy's SPANK plugin: the GPU energy of every Slurm job step, measured in slurmstepd through
// nnergy's NVML power source (the energy counter where the GPU has one, else mean power × time)
// and written as a JSON record per step (fleet/job_energy_record.h), optionally summed into the
// job's AdminComment. Debian's Slurm has no NVML energy plugin; this fills that gap.
//
// plugstack.conf:
//   optional /usr/lib/nnergy/nnergy_spank.so dir=/var/lib/nnergy/jobs [admin_comment=yes]
//       [interval_ms=200] [nvml=/path/libnvidia-ml.so.1] [scontrol=/usr/bin/scontrol]
//
// A measurement that cannot start (no NVML, no GPU) is logged and the job runs unmeasured: the
// plugin never fails a job for want of a reading. A malformed argument does fail the step, so
// that a misconfiguration is seen at once.
#include <fmt/format.h>
#include <pwd.h>
#include <slurm/slurm_version.h>
// spank.h declares the plugin's entry points without C linkage of its own.
extern "C" {
#include <slurm/spank.h>
}
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "nnergy/fleet/job_energy_record.h"
#include "nnergy/fleet/program_run.h"
#include "nnergy/fleet/slurm_environment.h"
#include "nnergy/measure/measurement_window.h"
#include "nnergy/measure/nvml_library.h"
#include "nnergy/measure/nvml_source.h"
#include "nnergy/measure/sampler.h"

extern "C" {
extern const char plugin_name[] = "nnergy";
extern const char plugin_type[] = "spank";
extern const unsigned int plugin_version = SLURM_VERSION_NUMBER;
extern const unsigned int spank_plugin_version = 1;
}

namespace {

// Slurm's step ids for the batch script and the extern step (slurm.h: SLURM_BATCH_SCRIPT,
// SLURM_EXTERN_CONT).
constexpr std::uint32_t kBatchStep = 0xFFFFFFFBu;
constexpr std::uint32_t kExternStep = 0xFFFFFFFFu;
constexpr double kDefaultIntervalMs = 200;
// scontrol gets this long to update the AdminComment before the step's end goes on without it.
constexpr double kScontrolTimeoutS = 10;

struct Config {
  std::filesystem::path dir = "/var/lib/nnergy/jobs";
  std::string nvml;  // empty: NvmlLibrary::default_path()
  double interval_ms = kDefaultIntervalMs;
  bool admin_comment = false;
  std::string scontrol = "/usr/bin/scontrol";
};

struct Step {
  std::shared_ptr<nnergy::measure::NvmlLibrary> nvml;
  std::unique_ptr<nnergy::measure::Sampler> sampler;
  std::unique_ptr<nnergy::measure::Meter> meter;
  std::size_t window = 0;
  double start_epoch_s = 0;
};

Config g_config;
std::unique_ptr<Step> g_step;

double epoch_now_s() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// Parses the plugstack.conf arguments; false (with a logged error) for a malformed one.
bool parse_arguments(int ac, char** av) {
  for (int i = 0; i < ac; ++i) {
    const std::string arg = av[i];
    const auto eq = arg.find('=');
    const std::string key = arg.substr(0, eq);
    const std::string value = eq == std::string::npos ? "" : arg.substr(eq + 1);
    if (key == "dir" && !value.empty()) {
      g_config.dir = value;
    } else if (key == "nvml" && !value.empty()) {
      g_config.nvml = value;
    } else if (key == "scontrol" && !value.empty()) {
      g_config.scontrol = value;
    } else if (key == "admin_comment" && (value == "yes" || value == "no")) {
      g_config.admin_comment = value == "yes";
    } else if (key == "interval_ms") {
      try {
        g_config.interval_ms = std::stod(value);
      } catch (const std::exception&) {
        g_config.interval_ms = -1;
      }
      if (!(g_config.interval_ms >= 1 && g_config.interval_ms <= 60000)) {
        slurm_error("nnergy: plugstack.conf argument '%s': expected interval_ms=1..60000",
                    arg.c_str());
        return false;
      }
    } else {
      slurm_error(
          "nnergy: plugstack.conf argument '%s': expected dir=DIR, admin_comment=yes|no, "
          "interval_ms=MS, nvml=PATH or scontrol=PATH",
          arg.c_str());
      return false;
    }
  }
  return true;
}

std::optional<std::string> job_env(spank_t sp, const std::string& name) {
  char buffer[4096];
  if (spank_getenv(sp, name.c_str(), buffer, sizeof buffer) != ESPANK_SUCCESS) return std::nullopt;
  return std::string(buffer);
}

template <typename T>
std::optional<T> item(spank_t sp, spank_item_t which) {
  T value{};
  if (spank_get_item(sp, which, &value) != ESPANK_SUCCESS) return std::nullopt;
  return value;
}

std::string user_name(uid_t uid) {
  passwd entry{};
  passwd* found = nullptr;
  char buffer[1024];
  if (getpwuid_r(uid, &entry, buffer, sizeof buffer, &found) == 0 && found != nullptr) {
    return found->pw_name;
  }
  return std::to_string(uid);
}

std::string host_name() {
  char buffer[256] = {};
  if (gethostname(buffer, sizeof buffer - 1) != 0) return "unknown";
  return buffer;
}

// The host name up to its first dot, as Slurm's NodeName usually is.
std::string short_host_name() {
  const std::string name = host_name();
  return name.substr(0, name.find('.'));
}

// Runs scontrol update JobId=JOB AdminComment=TEXT (JOB: an id, or ARRAY_TASK), waiting at most
// kScontrolTimeoutS.
void set_admin_comment(const std::string& job_id, const std::string& text) {
  const nnergy::fleet::ProgramRun run = nnergy::fleet::run_program(
      {g_config.scontrol, "update", "JobId=" + job_id, "AdminComment=" + text}, kScontrolTimeoutS);
  if (!run.started) {
    slurm_error("nnergy: cannot run %s to set the AdminComment of job %s",
                g_config.scontrol.c_str(), job_id.c_str());
  } else if (run.timed_out) {
    slurm_error("nnergy: %s update of job %s timed out", g_config.scontrol.c_str(), job_id.c_str());
  } else if (!run.ok()) {
    slurm_error("nnergy: %s update JobId=%s AdminComment=... failed", g_config.scontrol.c_str(),
                job_id.c_str());
  }
}

// The GPUs of the step: from the variable slurmstepd sets for its kind of step, checked against
// what Slurm allocated the job on this node (scontrol show job -d), which wins on a mismatch,
// logged as possible tampering.
std::vector<unsigned int> step_gpus(spank_t sp) {
  const std::uint32_t step_id = item<std::uint32_t>(sp, S_JOB_STEPID).value_or(0);
  const nnergy::fleet::SlurmStepKind kind = nnergy::fleet::slurm_step_kind(step_id);
  const std::string job = std::to_string(item<std::uint32_t>(sp, S_JOB_ID).value_or(0));
  std::vector<unsigned int> claimed;
  bool malformed = false;
  try {
    claimed = nnergy::fleet::step_gpu_indices(
        [sp](const std::string& name) { return job_env(sp, name); }, kind, "plugin");
  } catch (const std::exception& e) {
    slurm_error("nnergy: job %s: %s", job.c_str(), e.what());
    malformed = true;
  }
  std::optional<std::vector<unsigned int>> allocated;
  const nnergy::fleet::ProgramRun run =
      nnergy::fleet::run_program({g_config.scontrol, "show", "job", "-d", job}, kScontrolTimeoutS);
  if (run.ok()) {
    allocated = nnergy::fleet::allocated_gpu_indices(run.out, short_host_name());
    if (!allocated) {
      if (const auto node = job_env(sp, "SLURMD_NODENAME"))
        allocated = nnergy::fleet::allocated_gpu_indices(run.out, *node);
    }
  }
  if (!allocated) {
    slurm_info(
        "nnergy: job %s: the GPUs Slurm allocated on this node could not be read (%s show "
        "job -d); the step's environment is taken as it is",
        job.c_str(), g_config.scontrol.c_str());
    return claimed;
  }
  if (malformed) {
    slurm_error("nnergy: job %s: the allocation's GPUs are recorded", job.c_str());
    return *allocated;
  }
  const nnergy::fleet::CheckedGpus checked =
      nnergy::fleet::check_step_gpus(claimed, allocated, kind);
  if (!checked.tampering.empty()) {
    slurm_error("nnergy: job %s step %u: %s", job.c_str(), step_id, checked.tampering.c_str());
  }
  return checked.gpus;
}

// The records of job `job_id` in the record directory (file names "job-JOB.step-...").
std::vector<nnergy::fleet::JobEnergyRecord> records_of_job(const std::string& job_id) {
  std::vector<nnergy::fleet::JobEnergyRecord> records;
  const std::string prefix = "job-" + job_id + ".step-";
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(g_config.dir, error)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(prefix, 0) != 0 || entry.path().extension() != ".json") continue;
    try {
      records.push_back(nnergy::fleet::read_record(entry.path()));
    } catch (const std::exception& e) {
      slurm_error("nnergy: %s", e.what());
    }
  }
  return records;
}

}  // namespace

extern "C" {

int slurm_spank_init(spank_t sp, int ac, char** av) {
  if (spank_remote(sp) != 1) return ESPANK_SUCCESS;
  return parse_arguments(ac, av) ? ESPANK_SUCCESS : ESPANK_BAD_ARG;
}

int slurm_spank_init_post_opt(spank_t sp, int, char**) {
  if (spank_remote(sp) != 1) return ESPANK_SUCCESS;
  const auto step = item<std::uint32_t>(sp, S_JOB_STEPID);
  if (!step || *step == kExternStep) return ESPANK_SUCCESS;
  try {
    nnergy::measure::NvmlLoadResult loaded = nnergy::measure::NvmlLibrary::load(
        g_config.nvml.empty() ? nnergy::measure::NvmlLibrary::default_path() : g_config.nvml);
    if (!loaded.library) {
      slurm_info("nnergy: GPU energy not measured: %s", loaded.unavailable_reason.c_str());
      return ESPANK_SUCCESS;
    }
    // Every GPU of the node is sampled from the step's start; which ones are the step's is read
    // at its end, from the environment Slurm gave it.
    std::vector<std::unique_ptr<nnergy::measure::PowerSource>> sources;
    for (unsigned int i = 0; i < loaded.library->device_count(); ++i) {
      sources.push_back(std::make_unique<nnergy::measure::NvmlSource>(loaded.library, i));
    }
    auto s = std::make_unique<Step>();
    s->nvml = loaded.library;
    nnergy::measure::SamplerOptions options;
    options.period_s = g_config.interval_ms / 1000.0;
    options.max_samples_in_memory = 1 << 16;
    s->sampler = std::make_unique<nnergy::measure::Sampler>(std::move(sources), options);
    s->meter = std::make_unique<nnergy::measure::Meter>(*s->sampler);
    s->sampler->start();
    s->window = s->meter->begin();
    s->start_epoch_s = epoch_now_s();
    g_step = std::move(s);
  } catch (const std::exception& e) {
    slurm_error("nnergy: GPU energy not measured: %s", e.what());
  }
  return ESPANK_SUCCESS;
}

int slurm_spank_exit(spank_t sp, int, char**) {
  if (spank_remote(sp) != 1 || !g_step) return ESPANK_SUCCESS;
  std::unique_ptr<Step> s = std::move(g_step);
  try {
    const nnergy::measure::Measurement m = s->meter->end(s->window);
    s->sampler->stop();
    const double end_epoch_s = epoch_now_s();
    const std::vector<unsigned int> gpus = step_gpus(sp);
    if (gpus.empty()) return ESPANK_SUCCESS;  // a step without GPUs

    nnergy::fleet::JobEnergyRecord record;
    record.job_id = std::to_string(item<std::uint32_t>(sp, S_JOB_ID).value_or(0));
    const std::uint32_t step = item<std::uint32_t>(sp, S_JOB_STEPID).value_or(0);
    record.step = step == kBatchStep ? "batch" : std::to_string(step);
    const std::uint32_t array_job = item<std::uint32_t>(sp, S_JOB_ARRAY_ID).value_or(0);
    if (array_job != 0) {
      record.array_job_id = std::to_string(array_job);
      record.array_task_id =
          std::to_string(item<std::uint32_t>(sp, S_JOB_ARRAY_TASK_ID).value_or(0));
    }
    record.user = user_name(item<uid_t>(sp, S_JOB_UID).value_or(0));
    record.partition = job_env(sp, "SLURM_JOB_PARTITION").value_or("");
    record.node = host_name();
    record.start_epoch_s = s->start_epoch_s;
    record.end_epoch_s = end_epoch_s;
    for (const unsigned int index : gpus) {
      nnergy::fleet::GpuStepEnergy gpu;
      gpu.index = index;
      if (index >= m.sources.size()) {
        gpu.error = fmt::format("Slurm gave GPU {} but NVML has {} GPUs", index, m.sources.size());
      } else {
        const nnergy::measure::SourceMeasurement& source = m.sources[index];
        gpu.uuid = source.info.uuid;
        gpu.name = source.info.name;
        gpu.energy_j = source.energy_j;
        gpu.energy_method = source.energy_method;
        if (source.source_failed) gpu.error = source.source_error;
      }
      record.gpus.push_back(std::move(gpu));
    }
    nnergy::fleet::write_record(g_config.dir, record);
    if (g_config.admin_comment) {
      // An array's last task shares the array's job id, and `scontrol update JobId=ARRAY`
      // updates every task: name the task as ARRAY_TASK.
      const std::string job_spec = record.array_job_id.empty()
                                       ? record.job_id
                                       : record.array_job_id + "_" + record.array_task_id;
      set_admin_comment(job_spec,
                        nnergy::fleet::admin_comment(records_of_job(record.job_id), record.job_id));
    }
  } catch (const std::exception& e) {
    slurm_error("nnergy: GPU energy of the step not recorded: %s", e.what());
  }
  return ESPANK_SUCCESS;
}

}  // extern "C"
