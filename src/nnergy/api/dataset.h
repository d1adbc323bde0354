#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "nnergy/core/setting_name.h"
#include "nnergy/report/dataset_report.h"

// `nnergy dataset import|merge|export|validate`: one entry point per subcommand.
namespace nnergy::api {

/// Published measurements to add to a dataset.
struct DatasetImportRequest {
  /// A JSON list of published measurement records (e.g. data/calibration/measured_public.json).
  std::filesystem::path file;
  std::filesystem::path db;                     ///< the dataset; created when missing
  std::string command_line;                     ///< the invocation, for the result's context block
  SettingNames names = SettingNames::kKeyword;  ///< how messages name the settings above
};

/// Validates the records of `file` and stores the valid ones in `db` (one transaction); rejected
/// records and conflicts (an id stored with other content, kept as stored) are in the report.
/// Throws InvalidInput when `file` does not exist, cannot be read or is not a JSON list (the
/// dataset is then untouched), and for a dataset of another schema or a locked one.
report::DatasetImportReport import_published(const DatasetImportRequest& request);

/// Datasets to join into one.
struct DatasetMergeRequest {
  std::filesystem::path output;               ///< the destination; created when missing
  std::vector<std::filesystem::path> inputs;  ///< merged in this order
  SettingNames names = SettingNames::kKeyword;
};

/// Merges `inputs` into `output` (dataset::merge_datasets: rows matched by their natural keys,
/// nothing duplicated). Throws InvalidInput for an input that does not exist or is the output
/// itself, and for a file that is not a dataset of a readable schema.
report::DatasetMergeReport merge_datasets(const DatasetMergeRequest& request);

/// The tables `dataset export` writes.
enum class DatasetTable {
  kMeasurements,  ///< op measurements with their features (dataset::export_csv)
  kPublished,     ///< published measurements (dataset::export_published_csv)
};

/// One table of a dataset to write as CSV.
struct DatasetExportRequest {
  std::filesystem::path db;
  DatasetTable table = DatasetTable::kMeasurements;
  /// The file to write (whole, once the export succeeded); empty: the CSV is returned in the
  /// report instead.
  std::filesystem::path output;
  std::string command_line;  ///< for the CSV's context lines
  SettingNames names = SettingNames::kKeyword;
};

/// Exports the table with its "# " context lines (pandas: read_csv(path, comment="#")). Throws
/// InvalidInput naming the file for a missing dataset, one of another schema, and an output
/// that cannot be written (the setting `output`).
report::DatasetExportReport export_dataset(const DatasetExportRequest& request);

/// A dataset to check against itself.
struct DatasetValidateRequest {
  std::filesystem::path db;
  std::string command_line;  ///< for the result's context block
  SettingNames names = SettingNames::kKeyword;
};

/// Each whole-network measurement of `db` beside the sum of its measured ops
/// (learn::validate_networks). Throws InvalidInput for a missing dataset or one of another
/// schema.
report::DatasetValidationReport validate_dataset(const DatasetValidateRequest& request);

}  // namespace nnergy::api
