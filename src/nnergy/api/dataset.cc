#include "nnergy/api/dataset.h"

#include <fmt/format.h>

#include <fstream>
#include <sstream>

#include "nnergy/core/error.h"
#include "nnergy/dataset/dataset_export.h"
#include "nnergy/dataset/dataset_schema.h"
#include "nnergy/dataset/dataset_store.h"

namespace nnergy::api {

namespace {

void require_existing(const std::filesystem::path& path) {
  if (!std::filesystem::exists(path)) {
    throw InvalidInput(fmt::format("{}: no such dataset file", path.string()));
  }
}

}  // namespace

report::DatasetImportReport import_published(const DatasetImportRequest& r) {
  if (!std::filesystem::exists(r.file)) {
    throw InvalidInput(
        fmt::format("{}: no such file (expected a JSON list of published measurements, e.g. "
                    "data/calibration/measured_public.json)",
                    r.file.string()));
  }
  report::DatasetImportReport report;
  report.input = r.file;
  report.database = r.db;
  report.summary = dataset::import_published_measurements(r.file.string(), r.db.string());
  report.context = RunContext::now(r.command_line);
  report.context.add("input", r.file.string())
      .add("database", r.db.string())
      .add("dataset_schema_version", dataset::kDatasetSchemaVersion);
  return report;
}

report::DatasetMergeReport merge_datasets(const DatasetMergeRequest& r) {
  std::vector<std::string> inputs;
  for (const std::filesystem::path& in : r.inputs) {
    require_existing(in);
    if (std::filesystem::exists(r.output) && std::filesystem::equivalent(in, r.output)) {
      throw InvalidInput(fmt::format("{}: an input cannot also be the output", in.string()));
    }
    inputs.push_back(in.string());
  }
  report::DatasetMergeReport report;
  report.output = r.output;
  report.inputs = inputs.size();
  report.summary = dataset::merge_datasets(r.output.string(), inputs);
  return report;
}

report::DatasetExportReport export_dataset(const DatasetExportRequest& r) {
  require_existing(r.db);
  const dataset::DatasetStore store =
      dataset::DatasetStore::open(r.db.string(), dataset::OpenMode::kReadOnly);
  dataset::CsvExportOptions options;
  options.command_line = r.command_line;
  std::ostringstream table;
  report::DatasetExportReport report;
  report.published = r.table == DatasetTable::kPublished;
  report.rows = report.published ? dataset::export_published_csv(store, table, options)
                                 : dataset::export_csv(store, table, options);
  report.output = r.output;
  if (r.output.empty()) {
    report.csv = table.str();
    return report;
  }
  // Written whole after the export succeeded, so a failed export leaves no partial file.
  std::ofstream file(r.output, std::ios::binary | std::ios::trunc);
  file << table.str();
  file.close();
  if (!file) {
    throw InvalidInput(setting_with_value(r.names, "output", r.output.string()) +
                       ": cannot write the file");
  }
  return report;
}

report::DatasetValidationReport validate_dataset(const DatasetValidateRequest& r) {
  require_existing(r.db);
  const dataset::DatasetStore store =
      dataset::DatasetStore::open(r.db.string(), dataset::OpenMode::kReadOnly);
  report::DatasetValidationReport report;
  report.database = r.db;
  report.networks = learn::validate_networks(store);
  report.context = RunContext::now(r.command_line);
  report.context.add("database", r.db.string());
  return report;
}

}  // namespace nnergy::api
