#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "nnergy/dataset/dataset_store.h"
#include "nnergy/published/published_measurement.h"

namespace nnergy::dataset {

/// What import_published_measurements did with one file.
struct PublishedImportSummary {
  std::string input_path;
  std::size_t records_read = 0;  ///< elements of the file's JSON list
  std::size_t accepted = 0;      ///< records that passed validation
  std::vector<published::RejectedRecord>
      rejected;                 ///< the others, with their reasons, in file order
  PublishedStoreResult stored;  ///< of the accepted: imported, already present, conflicts
  /// Accepted records per `source`, `gpu` and `quantity` (imported or not).
  std::map<std::string, std::int64_t> per_source;
  std::map<std::string, std::int64_t> per_gpu;
  std::map<std::string, std::int64_t> per_quantity;
};

/// Reads the published-measurements file `json_path` (read_published_measurements), then opens
/// or creates the dataset `db_path` and stores the accepted records
/// (DatasetStore::add_published_measurements, one transaction; an older dataset is migrated).
/// Throws InvalidInput naming the file when it cannot be read, is not JSON or is not a list
/// (the dataset is then neither created nor changed), and as DatasetStore::open does for the
/// dataset; rejected records and conflicts are reported in the summary, not thrown.
PublishedImportSummary import_published_measurements(const std::string& json_path,
                                                     const std::string& db_path);

}  // namespace nnergy::dataset
