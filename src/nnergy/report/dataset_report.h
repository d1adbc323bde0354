#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "nnergy/core/run_context.h"
#include "nnergy/dataset/dataset_merge.h"
#include "nnergy/dataset/published_import.h"
#include "nnergy/learn/network_validation.h"

// The results of `nnergy dataset import|merge|export|validate` and their renderers.
namespace nnergy::report {

/// `dataset import`: published measurements added to a dataset.
struct DatasetImportReport {
  RunContext context;  ///< with input, database and dataset_schema_version
  std::filesystem::path input;
  std::filesystem::path database;
  dataset::PublishedImportSummary summary;
};

/// Counts (read, valid, imported, already present, conflicts, rejected with reasons), then the
/// valid records per source, GPU and quantity.
std::string render_text(const DatasetImportReport& report);
/// {"context", "records_read", "records_valid", "records_imported", "records_already_present",
/// "records_conflicting", "records_rejected", "rejected", "conflicts",
/// "valid_records_per_source", "valid_records_per_gpu", "valid_records_per_quantity"}.
nlohmann::ordered_json to_json(const DatasetImportReport& report);

/// `dataset merge`: datasets joined into one.
struct DatasetMergeReport {
  std::filesystem::path output;
  std::size_t inputs = 0;  ///< files merged
  dataset::MergeSummary summary;
};

/// Rows added, replaced and kept per table; published conflicts one per line.
std::string render_text(const DatasetMergeReport& report);

/// `dataset export`: one table of a dataset as CSV.
struct DatasetExportReport {
  std::string csv;               ///< the CSV, when it goes to stdout (output empty)
  std::filesystem::path output;  ///< the file written; empty: stdout
  std::int64_t rows = 0;
  bool published = false;  ///< the published measurements, else the op measurements
};

/// The CSV itself when it goes to stdout, else one line naming the file and the rows written.
std::string render_text(const DatasetExportReport& report);

/// `dataset validate`: whole networks against the sum of their measured ops.
struct DatasetValidationReport {
  RunContext context;  ///< with the database
  std::filesystem::path database;
  std::vector<learn::NetworkValidation> networks;
};

/// One table row per network measurement (or one line saying there is none to validate).
std::string render_text(const DatasetValidationReport& report);
/// {"context", "networks": [{network, mode, dtype, clock_mhz, measured_time_s, summed_op_time_s,
/// unique_ops, unique_ops_measured, nodes_not_measured, time_relative_difference,
/// measured_energy_j, summed_op_energy_j, energy_relative_difference}]} (null where unknown).
nlohmann::ordered_json to_json(const DatasetValidationReport& report);

}  // namespace nnergy::report
