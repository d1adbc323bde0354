#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "nnergy/core/run_context.h"
#include "nnergy/fleet/job_summary.h"

namespace nnergy::report {

/// What `nnergy jobs` found in a directory of job energy records.
struct JobsReport {
  RunContext context;
  std::string records_dir;
  fleet::JobsSummary summary;
};

/// Three tables: per job (id, array task, user, partition, nodes, steps, GPUs, time, energy in
/// J and kWh), per user and per partition, and the total.
std::string render_text(const JobsReport& report);

/// {"context", "records_dir", "energy_j", "records", "jobs": [{"job_id", "array_job_id",
/// "array_task_id", "user", "partition", "nodes", "steps", "gpus", "start_epoch_s",
/// "end_epoch_s", "energy_j"}], "users": [{"name", "jobs", "energy_j"}], "partitions": [...]}.
nlohmann::ordered_json to_json(const JobsReport& report);

/// One row per job: job_id,array_job_id,array_task_id,user,partition,nodes,steps,gpus,
/// start_epoch_s,end_epoch_s,energy_j (after the context as "# key: value" lines).
std::string render_csv(const JobsReport& report);

}  // namespace nnergy::report
