#include "nnergy/api/jobs.h"

#include "nnergy/fleet/job_energy_record.h"

namespace nnergy::api {

report::JobsReport jobs(const JobsRequest& r) {
  const std::vector<fleet::JobEnergyRecord> records =
      fleet::read_records(r.records_dir, setting_name(r.names, "records_dir", "dir"));
  report::JobsReport report;
  report.context = RunContext::now(r.command_line);
  report.context.add("records_dir", r.records_dir.string());
  report.records_dir = r.records_dir.string();
  report.summary = fleet::summarize_jobs(records, {r.user, r.partition, r.job_id});
  return report;
}

}  // namespace nnergy::api
