#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "nnergy/dataset/dataset_store.h"

namespace nnergy::dataset {

/// Options of export_csv.
struct CsvExportOptions {
  std::string command_line;    ///< written to the context lines
  bool include_errors = true;  ///< false: only rows with status ok
};

/// The columns export_csv writes, in order; units are in the names (time_s, energy_j, ...).
const std::vector<std::string>& csv_columns();

/// Writes the op measurements of `store` as one flat CSV table: "# key: value" context lines
/// (tool, tool_version, dataset_schema_version, source, command_line, date_utc, row_count),
/// then a header row (csv_columns()) and one row per measurement joined with its device,
/// session and op features. Missing values (no power source, error rows) are empty fields.
/// Read it with pandas.read_csv(path, comment='#'). Returns the number of data rows.
std::int64_t export_csv(const DatasetStore& store, std::ostream& out,
                        const CsvExportOptions& options = {});

}  // namespace nnergy::dataset
