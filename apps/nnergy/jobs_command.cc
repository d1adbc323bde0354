// `nnergy jobs --dir DIR`: GPU energy per Slurm job, user and partition, from the records of
// nnergy's SPANK plugin.
#include <memory>
#include <string>

#include "command.h"
#include "nnergy/api/jobs.h"
#include "nnergy/core/error.h"
#include "nnergy/report/jobs_report.h"
#include "nnergy/report/output_format.h"

namespace nnergy::cli {

namespace {

struct JobsOptions {
  std::string dir;
  std::string user;
  std::string partition;
  std::string job;
  std::string format = "text";
};

CommandResult run_jobs(const JobsOptions& o, const std::string& command_line) {
  if (o.format != "text" && o.format != "json" && o.format != "csv") {
    throw InvalidInput("--format '" + o.format + "': expected text, json or csv");
  }
  api::JobsRequest request;
  request.names = SettingNames::kFlag;
  request.command_line = command_line;
  request.records_dir = o.dir;
  request.user = o.user;
  request.partition = o.partition;
  request.job_id = o.job;
  const report::JobsReport report = api::jobs(request);
  return {report::render(report, report::choose_format(o.format == "json", o.format == "csv")), 0};
}

}  // namespace

void add_jobs_command(CLI::App& app, CommandRun* selected, const std::string& command_line) {
  auto o = std::make_shared<JobsOptions>();
  CLI::App* cmd = app.add_subcommand(
      "jobs",
      "GPU energy per Slurm job, user and partition, from the records of nnergy's SPANK plugin");
  cmd->add_option("--dir", o->dir, "the plugin's record directory (its dir= argument)")->required();
  cmd->add_option("--user", o->user, "only this user's jobs");
  cmd->add_option("--partition", o->partition, "only this partition's jobs");
  cmd->add_option("--job", o->job, "only this job id (or all tasks of this array job id)");
  cmd->add_option("--format", o->format, "text, json or csv")->capture_default_str();
  cmd->footer("The SPANK plugin and its records: docs/fleet.md");
  cmd->callback([o, selected, command_line] {
    *selected = [o, command_line] { return run_jobs(*o, command_line); };
  });
}

}  // namespace nnergy::cli
