#pragma once

#include <functional>
#include <optional>
#include <string>
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

}  // namespace nnergy::fleet
