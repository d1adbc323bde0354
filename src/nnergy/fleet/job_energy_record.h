#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace nnergy::fleet {

/// One GPU's energy over a Slurm job step.
struct GpuStepEnergy {
  unsigned int index = 0;  ///< NVML index on the node
  std::string uuid;
  std::string name;
  std::optional<double> energy_j;  ///< nullopt when the GPU could not be measured
  std::string energy_method;       ///< "counter" (NVML total energy) or "power-mean" (P̄·t)
  std::string error;               ///< why it could not be measured; "" when it was
};

/// The GPU energy of one Slurm job step, as nnergy's SPANK plugin records it (one JSON file per
/// step and node in its record directory).
struct JobEnergyRecord {
  std::string job_id;         ///< SLURM_JOB_ID, e.g. "4711"
  std::string step;           ///< "0", "1", ..., or "batch" (the batch script's step)
  std::string array_job_id;   ///< the array's job id; "" outside an array
  std::string array_task_id;  ///< the task's index in the array; "" outside an array
  std::string user;           ///< the job's user name (or uid when it has no name)
  std::string partition;      ///< SLURM_JOB_PARTITION; "" when unknown
  std::string node;           ///< host name of the node
  double start_epoch_s = 0;   ///< UNIX time the step's measurement began, s
  double end_epoch_s = 0;     ///< UNIX time it ended, s
  std::vector<GpuStepEnergy> gpus;

  /// Sum over the GPUs measured, J.
  double energy_j() const;
  /// "job-J.step-S.NODE.json": unique per step and node.
  std::string file_name() const;
};

/// {"schema": "nnergy-job-energy/1", "job_id", "step", "array_job_id", "array_task_id", "user",
/// "partition", "node", "start_epoch_s", "end_epoch_s", "energy_j", "gpus": [{"index", "uuid",
/// "name", "energy_j", "energy_method", "error"}]}.
nlohmann::ordered_json to_json(const JobEnergyRecord& record);
/// The inverse of to_json. Throws InvalidInput naming `where` (the file) and the key that is
/// missing or of the wrong type.
JobEnergyRecord record_from_json(const nlohmann::json& json, const std::string& where);

/// Writes `record` into `directory` (atomically, through a temporary created exclusively; the
/// directory created mode 0755 if missing); returns the file's path. The directory must be a
/// real directory (not a symbolic link) owned by the writing user (root for the SPANK plugin)
/// and writable by nobody else (no group or other write bit), so that no job's user can plant
/// files or links in it. Throws InvalidInput naming the directory when it is not so (saying
/// what to change) or cannot be written.
std::filesystem::path write_record(const std::filesystem::path& directory,
                                   const JobEnergyRecord& record);

/// The record in `file`. Throws InvalidInput naming the file when it cannot be read or is not a
/// record.
JobEnergyRecord read_record(const std::filesystem::path& file);

/// Every record (*.json) in `directory`, in file-name order. Throws InvalidInput naming
/// `setting` when the directory does not exist, and naming the file for one that is not a record.
std::vector<JobEnergyRecord> read_records(const std::filesystem::path& directory,
                                          const std::string& setting);

/// The GPU energy of job `job_id` from `records` per GPU ("NODE:INDEX"), J: on each node, from
/// its batch step where there is one there (it spans the job, and the srun steps inside it),
/// else summed over its steps there.
std::map<std::string, double> job_gpu_energy_j(const std::vector<JobEnergyRecord>& records,
                                               const std::string& job_id);

/// The sum of job_gpu_energy_j, J.
double job_energy_j(const std::vector<JobEnergyRecord>& records, const std::string& job_id);

/// The job's AdminComment: "nnergy_gpu_joules=TOTAL gpus=NODE:INDEX=J,..." (J with one decimal).
std::string admin_comment(const std::vector<JobEnergyRecord>& records, const std::string& job_id);

}  // namespace nnergy::fleet
