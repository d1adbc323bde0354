// `nnergy dataset`: merge measured datasets, export them as a flat table, validate them against
// themselves, import published measurements.
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "command.h"
#include "nnergy/api/dataset.h"
#include "nnergy/core/error.h"
#include "nnergy/report/dataset_report.h"
#include "nnergy/report/output_format.h"

namespace nnergy::cli {

namespace {

struct MergeOptions {
  std::string output;
  std::vector<std::string> inputs;
};

struct ValidateOptions {
  std::string db;
  bool json = false;
};

struct ExportOptions {
  std::string db;
  bool csv = false;
  std::string table = "measurements";
  std::string output;
};

struct ImportOptions {
  std::string file;
  std::string db;
  bool json = false;
};

std::string run_import(const ImportOptions& o, const std::string& command_line) {
  api::DatasetImportRequest r;
  r.names = SettingNames::kFlag;
  r.command_line = command_line;
  r.file = o.file;
  r.db = o.db;
  const report::DatasetImportReport report = api::import_published(r);
  return report::render(report, report::choose_format(o.json));
}

std::string run_merge(const MergeOptions& o) {
  api::DatasetMergeRequest r;
  r.names = SettingNames::kFlag;
  r.output = o.output;
  r.inputs.assign(o.inputs.begin(), o.inputs.end());
  return report::render_text(api::merge_datasets(r));
}

std::string run_export(const ExportOptions& o, const std::string& command_line) {
  if (!o.csv) throw InvalidInput("dataset export: choose a format: --csv");
  api::DatasetExportRequest r;
  r.names = SettingNames::kFlag;
  r.command_line = command_line;
  r.db = o.db;
  r.table =
      o.table == "published" ? api::DatasetTable::kPublished : api::DatasetTable::kMeasurements;
  if (o.output != "-") r.output = o.output;
  return report::render_text(api::export_dataset(r));
}

std::string run_validate(const ValidateOptions& o, const std::string& command_line) {
  api::DatasetValidateRequest r;
  r.names = SettingNames::kFlag;
  r.command_line = command_line;
  r.db = o.db;
  const report::DatasetValidationReport report = api::validate_dataset(r);
  return report::render(report, report::choose_format(o.json));
}

}  // namespace

void add_dataset_command(CLI::App& app, CommandRun* selected, const std::string& command_line) {
  CLI::App* cmd = app.add_subcommand(
      "dataset", "Merge, export and validate measured datasets; import published measurements");
  cmd->require_subcommand(1);

  auto imp = std::make_shared<ImportOptions>();
  CLI::App* import_cmd = cmd->add_subcommand(
      "import", "Add published measurements (a JSON list, data/calibration/) to a dataset");
  import_cmd->add_option("FILE", imp->file, "JSON list of published measurement records")
      ->required();
  import_cmd->add_option("--db", imp->db, "dataset file (created when missing)")->required();
  import_cmd->add_flag("--json", imp->json, "write the summary as JSON");
  import_cmd->callback([imp, selected, command_line] {
    *selected = [imp, command_line] { return CommandResult{run_import(*imp, command_line), 0}; };
  });

  auto merge = std::make_shared<MergeOptions>();
  CLI::App* merge_cmd =
      cmd->add_subcommand("merge", "Join datasets (e.g. the shards of a campaign) into OUT");
  merge_cmd->add_option("OUT", merge->output, "destination dataset (created when missing)")
      ->required();
  merge_cmd->add_option("IN", merge->inputs, "datasets to merge, in order")->required();
  merge_cmd->callback([merge, selected] {
    *selected = [merge] { return CommandResult{run_merge(*merge), 0}; };
  });

  auto val = std::make_shared<ValidateOptions>();
  CLI::App* validate_cmd = cmd->add_subcommand(
      "validate", "Compare measured whole networks with the sum of their measured ops");
  validate_cmd->add_option("--db", val->db, "dataset file")->required();
  validate_cmd->add_flag("--json", val->json, "write JSON instead of text");
  validate_cmd->callback([val, selected, command_line] {
    *selected = [val, command_line] { return CommandResult{run_validate(*val, command_line), 0}; };
  });

  auto exp = std::make_shared<ExportOptions>();
  CLI::App* export_cmd =
      cmd->add_subcommand("export", "Write a table of the dataset as flat CSV (pandas-ready)");
  export_cmd->add_option("--db", exp->db, "dataset file")->required();
  export_cmd->add_flag("--csv", exp->csv, "CSV with '#' context lines");
  export_cmd
      ->add_option("--table", exp->table,
                   "measurements (op measurements with their features) or published "
                   "(published measurements from `dataset import`)")
      ->check(CLI::IsMember({"measurements", "published"}))
      ->capture_default_str();
  export_cmd->add_option("-o,--output", exp->output, "output file (default: stdout)");
  export_cmd->callback([exp, selected, command_line] {
    *selected = [exp, command_line] { return CommandResult{run_export(*exp, command_line), 0}; };
  });
}

}  // namespace nnergy::cli
