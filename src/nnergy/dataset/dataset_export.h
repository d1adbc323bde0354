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
  bool include_errors = true;  ///< false: only rows with status ok (export_csv only)
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

/// The columns export_published_csv writes, in order: every field of PublishedMeasurement under
/// its own name (value in `unit` as published, value_si in `unit_si`, median_ms, stdev_ms), then
/// imported_utc.
const std::vector<std::string>& published_csv_columns();

/// Writes the `published_measurements` table of `store` as CSV, ordered by id: the same "# key:
/// value" context lines as export_csv (the units line explains value/unit and value_si/unit_si),
/// a header row (published_csv_columns()) and one row per record; absent optional fields are
/// empty. A schema-version-1 file has no such table: the export holds the header only.
/// Read it with pandas.read_csv(path, comment='#'). Returns the number of data rows.
std::int64_t export_published_csv(const DatasetStore& store, std::ostream& out,
                                  const CsvExportOptions& options = {});

}  // namespace nnergy::dataset
