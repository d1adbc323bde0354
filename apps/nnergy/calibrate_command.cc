// `nnergy calibrate`: fits the analytical time model to published whole-network times and
// writes the parameters every prediction then uses (data/calibration/calibrated.json).
#include <memory>
#include <string>
#include <vector>

#include "command.h"
#include "nnergy/api/calibrate.h"
#include "nnergy/api/calibrate_kernels.h"
#include "nnergy/api/calibrate_serve.h"
#include "nnergy/calibration/time_calibration.h"
#include "nnergy/core/error.h"
#include "nnergy/report/calibration_report.h"
#include "nnergy/report/output_format.h"

namespace nnergy::cli {

namespace {

struct CalibrateOptions {
  std::string published;
  std::vector<std::string> grades = {"A", "B"};
  std::string output;  ///< default: the data directory's calibration/calibrated.json
  bool dry_run = false;
  bool json = false;
  unsigned threads = 0;
  calibration::CalibrationOptions fit;
  bool serve = false;          ///< the serving model, on LLM-serving measurements
  bool cross_validate = true;  ///< --serve: also the held-out fits
  std::string mapping;         ///< --serve: how records become serve runs
  bool kernels = false;        ///< the kernel model, on measured kernel tables
  std::string table;           ///< --kernels: the GEMM table
};

std::string run_calibrate_kernels(const CalibrateOptions& o, const std::string& command_line) {
  api::CalibrateKernelsRequest r;
  r.names = SettingNames::kFlag;
  r.command_line = command_line;
  r.table = o.table;
  r.output = o.output;
  r.dry_run = o.dry_run;
  const auto progress = stderr_progress("calibrate --kernels", "fits");
  r.progress = progress->callback();
  const report::KernelCalibrationReport report = api::calibrate_kernels(r);
  return report::render(report, report::choose_format(o.json));
}

std::string run_calibrate_serve(const CalibrateOptions& o, const std::string& command_line) {
  api::CalibrateServeRequest r;
  r.names = SettingNames::kFlag;
  r.command_line = command_line;
  r.published = o.published;
  r.mapping = o.mapping;
  r.output = o.output;
  r.dry_run = o.dry_run;
  r.cross_validate = o.cross_validate;
  const auto progress = stderr_progress("calibrate --serve", "fits");
  r.progress = progress->callback();
  const report::ServeCalibrationReport report = api::calibrate_serve(r);
  return report::render(report, report::choose_format(o.json));
}

std::string run_calibrate(const CalibrateOptions& o, const std::string& command_line) {
  if (o.serve && o.kernels)
    throw InvalidInput("--serve and --kernels: choose one model to calibrate");
  if (o.serve) return run_calibrate_serve(o, command_line);
  if (o.kernels) return run_calibrate_kernels(o, command_line);
  api::CalibrateRequest r;
  r.names = SettingNames::kFlag;
  r.command_line = command_line;
  r.published = o.published;
  r.grades = o.grades;
  r.output = o.output;
  r.dry_run = o.dry_run;
  r.threads = o.threads;
  r.fit = o.fit;
  const report::CalibrationReport report = api::calibrate(r);
  return report::render(report, report::choose_format(o.json));
}

}  // namespace

void add_calibrate_command(CLI::App& app, CommandRun* selected, const std::string& command_line) {
  auto options = std::make_shared<CalibrateOptions>();
  CLI::App* cmd = app.add_subcommand(
      "calibrate",
      "Fit the analytical model's efficiencies, launch costs and host cost per GPU generation "
      "to published whole-network times, cross-validate (leave one GPU / one source out) and "
      "write them for predict");
  cmd->add_option("--published", options->published,
                  "published measurements (default: the data directory's "
                  "calibration/measured_public.json)");
  cmd->add_option("--grades", options->grades, "grades of the records used, comma-separated")
      ->delimiter(',')
      ->capture_default_str();
  cmd->add_option("--output", options->output,
                  "where to write the parameters (default: the data directory's "
                  "calibration/calibrated.json, which predict reads)");
  cmd->add_flag("--dry-run", options->dry_run, "fit and report, write nothing");
  cmd->add_flag("--serve", options->serve,
                "calibrate nnergy serve instead, on published LLM-serving measurements "
                "(calibration/llm_measured_public.json; writes llm/calibrated.json)");
  cmd->add_flag("--kernels", options->kernels,
                "calibrate the kernel model instead, on measured GEMMs "
                "(calibration/kernels/aic_gemm.csv.gz; writes kernel/calibrated.json)");
  cmd->add_option("--table", options->table,
                  "--kernels: the measured GEMM table (gzipped CSV; default: "
                  "calibration/kernels/aic_gemm.csv.gz)");
  cmd->add_option("--mapping", options->mapping,
                  "--serve: how records become serve runs (default: calibration/llm_runs.json)");
  cmd->add_flag("!--no-cross-validation", options->cross_validate,
                "--serve: fit once, without the leave-one-out fits");
  cmd->add_flag("--json", options->json, "JSON instead of text");
  cmd->add_option("--threads", options->threads, "threads for the cross-validation folds (0: all)")
      ->capture_default_str();
  cmd->add_option("--min-generation-records", options->fit.min_generation_records,
                  "a generation with fewer whole-network times is transferred, not fitted")
      ->capture_default_str();
  cmd->callback([options, selected, command_line] {
    *selected = [options, command_line] {
      return CommandResult{run_calibrate(*options, command_line), 0};
    };
  });
}

}  // namespace nnergy::cli
