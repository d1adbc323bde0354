#pragma once

#include <filesystem>
#include <string>

#include "nnergy/core/setting_name.h"
#include "nnergy/report/jobs_report.h"

namespace nnergy::api {

/// `nnergy jobs`: GPU energy per Slurm job, user and partition, from the records nnergy's SPANK
/// plugin writes (one JSON file per job step and node).
struct JobsRequest {
  std::filesystem::path records_dir;  ///< the plugin's dir= directory
  std::string user;                   ///< only this user's jobs; "" for all
  std::string partition;              ///< only this partition's jobs; "" for all
  std::string job_id;                 ///< only this job (or array job); "" for all
  std::string command_line;           ///< for the report's context block
  SettingNames names = SettingNames::kKeyword;
};

/// Reads the records and summarises them (fleet::summarize_jobs). Throws InvalidInput naming
/// records_dir when it is not a directory, and naming the file of a record that cannot be read.
report::JobsReport jobs(const JobsRequest& request);

}  // namespace nnergy::api
