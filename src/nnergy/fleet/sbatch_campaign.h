#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace nnergy::fleet {

/// A profiling campaign as a Slurm job array plus a dependent merge job.
struct SbatchCampaign {
  /// Where the scripts, the shard datasets (shards/) and the logs (logs/) go; created if missing.
  std::filesystem::path directory;
  std::filesystem::path nnergy;  ///< the nnergy executable the jobs run (absolute)
  /// The `nnergy profile` flags every task runs with, without --db, --shard and --sbatch*.
  std::vector<std::string> profile_arguments;
  std::filesystem::path db;  ///< the merged dataset the merge job writes
  int tasks = 1;             ///< array tasks = shards, 1 to 10000
  /// Each task asks Slurm for one GPU (--gres=gpu:1) and measures it (`--gpu auto`).
  bool gpu = false;
  /// Further sbatch options for both jobs, each "--NAME" or "--NAME=VALUE" (e.g.
  /// "--partition=gpu", "--time=02:00:00", "--account=proj").
  std::vector<std::string> sbatch_options;
  std::string job_name = "nnergy-profile";
  /// How messages name the settings: the directory, the task count and the sbatch options.
  std::string directory_setting = "--sbatch";
  std::string tasks_setting = "--sbatch-tasks";
  std::string options_setting = "--sbatch-option";
};

/// The files write_sbatch_campaign wrote.
struct SbatchFiles {
  std::filesystem::path array_script;   ///< profile-array.sbatch: `sbatch --array=0-(N-1)`
  std::filesystem::path merge_script;   ///< merge.sbatch: `nnergy dataset merge DB SHARDS...`
  std::filesystem::path submit_script;  ///< submit.sh: both, the merge with --dependency=afterok
  std::vector<std::filesystem::path> shard_dbs;  ///< shards/shard-K.sqlite, K = 0..N-1
};

/// Writes the three scripts (all or none). Each array task runs `nnergy profile ... --shard auto
/// --db shards/shard-$SLURM_ARRAY_TASK_ID.sqlite`; tasks are --requeue-able, a task whose
/// measurement is killed by a signal (SIGKILL, OOM) requeues itself (up to 3 times), and a requeued
/// task resumes its shard (profile skips measured keys; a measurement in flight when a task was
/// killed was never committed), so the merged dataset is that of an uninterrupted run. Throws
/// InvalidInput naming the setting for a task count out of range, an sbatch option that is not
/// "--NAME[=VALUE]" on one line, or a directory that cannot be created or written.
SbatchFiles write_sbatch_campaign(const SbatchCampaign& campaign);

/// `text` quoted for a POSIX shell: as is when it holds only safe characters, else in single
/// quotes with each ' written '\''.
std::string shell_quote(std::string_view text);

}  // namespace nnergy::fleet
