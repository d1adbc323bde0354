#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "nnergy/dataset/measurement_key.h"

namespace nnergy::fleet {

/// Reads an environment variable: the value, or nullopt when unset. `process_environment()`
/// reads the process's; tests pass a map.
using Environment = std::function<std::optional<std::string>(const std::string& name)>;

/// The process's environment (getenv). Not thread-safe against setenv.
Environment process_environment();

/// The shard of a Slurm array task, for `--shard auto`: shard (ID − MIN)/STEP + 1 of COUNT from
/// SLURM_ARRAY_TASK_ID, SLURM_ARRAY_TASK_COUNT, SLURM_ARRAY_TASK_MIN (default 0) and
/// SLURM_ARRAY_TASK_STEP (default 1), so that `--array=0-3`, `--array=1-4` and `--array=0-6:2`
/// each give shards 1/4 to 4/4. Throws InvalidInput naming `setting` and the variable when the
/// task is not part of an array, a variable is not a non-negative integer, or the ids do not fit
/// (an ID below MIN or off the STEP grid, a shard beyond COUNT: e.g. `--array=0-7%2` with a
/// throttle is fine, but a sparse list such as `--array=1,5,9` is not a range and is refused).
dataset::Shard shard_from_slurm(const Environment& environment, const std::string& setting);

/// The GPUs Slurm allotted to this step or job, as NVML indices: SLURM_STEP_GPUS (set for
/// srun steps), else SLURM_JOB_GPUS (batch scripts), a comma-separated list of the node's GPU
/// indices ("0,2"). These are global indices (gres.conf's order, which is NVML's PCI bus order
/// with AutoDetect=nvml), unlike CUDA_VISIBLE_DEVICES, which task/cgroup renumbers from 0.
/// Empty when neither variable is set; throws InvalidInput naming `setting` and the variable for
/// an entry that is not an index.
std::vector<unsigned int> slurm_gpu_indices(const Environment& environment,
                                            const std::string& setting);

/// Kinds of Slurm job step, as the SPANK plugin tells them apart by step id.
enum class SlurmStepKind {
  kBatch,        ///< the batch script (SLURM_BATCH_SCRIPT)
  kInteractive,  ///< salloc's interactive step (SLURM_INTERACTIVE_STEP)
  kOther,        ///< srun steps
};
/// The kind of step `step_id` (S_JOB_STEPID) is.
SlurmStepKind slurm_step_kind(std::uint32_t step_id);

/// The GPUs of a step as the root SPANK plugin must read them from the job's environment: only
/// the variable slurmstepd itself sets for that kind of step — SLURM_JOB_GPUS for the batch and
/// interactive steps, SLURM_STEP_GPUS for srun steps — never the other one, which a submitter's
/// shell can carry into the job (sbatch copies SLURM_STEP_GPUS even with --export=NONE).
/// Sorted and deduplicated. Throws InvalidInput naming `setting` for an entry that is not an
/// index. This is still the job's environment: cross-check it with allocated_gpu_indices.
std::vector<unsigned int> step_gpu_indices(const Environment& environment, SlurmStepKind kind,
                                           const std::string& setting);

/// The GPU indices Slurm allocated job `job` on node `host`, from the output of `scontrol show
/// job -d JOB` (Slurm 22.05 and later): the detail line "Nodes=HOST CPU_IDs=… Mem=… GRES=…"
/// that names the node (exactly, or in a bracketed host list such as node[01-04,07]), its gpu
/// entries' IDX lists ("gpu:2(IDX:0-1)", "gpu:a100:1(IDX:3)"). Only detail lines before the
/// job's free-text fields are read, so that a job name or comment cannot forge one. nullopt
/// when no detail line names the node (scontrol's output changed, the job is gone).
std::optional<std::vector<unsigned int>> allocated_gpu_indices(std::string_view scontrol_output,
                                                               std::string_view host);

/// A step's GPUs checked against the allocation (the allocation wins).
struct CheckedGpus {
  std::vector<unsigned int> gpus;  ///< what to record
  /// Empty when the environment agrees with the allocation; else one line saying what the
  /// environment named, what Slurm allocated and what is recorded, for the site's log.
  std::string tampering;
};
/// `claimed` (step_gpu_indices) checked against `allocated` (allocated_gpu_indices; nullopt when
/// unknown: `claimed` is taken as it is). A batch or interactive step must name exactly the
/// allocation; an srun step a subset of it. Otherwise the allocation is recorded and
/// `tampering` says so. `variable` names the environment variable read.
CheckedGpus check_step_gpus(const std::vector<unsigned int>& claimed,
                            const std::optional<std::vector<unsigned int>>& allocated,
                            SlurmStepKind kind);

}  // namespace nnergy::fleet
