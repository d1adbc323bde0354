#pragma once

#include <string>
#include <vector>

#include "nnergy/fleet/job_energy_record.h"

namespace nnergy::fleet {

/// One Slurm job's GPU energy.
struct JobEnergyRow {
  std::string job_id;
  std::string array_job_id;   ///< "" outside an array
  std::string array_task_id;  ///< "" outside an array
  std::string user;
  std::string partition;
  std::vector<std::string> nodes;  ///< sorted
  int steps = 0;                   ///< step records
  int gpus = 0;                    ///< distinct GPUs (by UUID, else node and index)
  double energy_j = 0;             ///< job_energy_j
  double start_epoch_s = 0;        ///< earliest step start, UNIX s
  double end_epoch_s = 0;          ///< latest step end, UNIX s
};

/// The energy of the jobs of one user or one partition.
struct EnergyGroupRow {
  std::string name;
  int jobs = 0;
  double energy_j = 0;
};

/// `nnergy jobs`: energy per job, per user and per partition.
struct JobsSummary {
  std::vector<JobEnergyRow> jobs;          ///< by start time, then job id
  std::vector<EnergyGroupRow> users;       ///< by energy, largest first
  std::vector<EnergyGroupRow> partitions;  ///< by energy, largest first
  double energy_j = 0;                     ///< all jobs
  int records = 0;                         ///< step records read (after the filter)
};

/// Which records to summarise; an empty field matches everything.
struct JobFilter {
  std::string user;
  std::string partition;
  std::string job_id;  ///< a job id, or an array job id (all its tasks)
};

/// Groups `records` by job, then sums per user and partition. Pure function.
JobsSummary summarize_jobs(const std::vector<JobEnergyRecord>& records, const JobFilter& filter);

}  // namespace nnergy::fleet
