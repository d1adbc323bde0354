#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "nnergy/dataset/dataset_store.h"

namespace nnergy::dataset {

/// What a merge did.
struct MergeSummary {
  std::int64_t measurements_added = 0;     ///< keys the destination did not have
  std::int64_t measurements_replaced = 0;  ///< keys where the source row won
  std::int64_t measurements_kept = 0;      ///< keys where the destination row won
  std::int64_t network_measurements_added = 0;
  std::int64_t network_measurements_replaced = 0;
  std::int64_t network_measurements_kept = 0;
  std::int64_t published_added = 0;            ///< published measurements (by id) not yet stored
  std::int64_t published_already_present = 0;  ///< ids stored with the same content
  std::vector<PublishedConflict> published_conflicts;  ///< ids stored with other content: kept
};

/// Copies every device, session, op, network and measurement of the dataset `source_path`
/// (opened read-only) into `destination`, matching rows by their natural keys (device name +
/// uuid, session uuid, op signature, network name + inputs), so nothing is duplicated. For a
/// measurement key present in both, an ok row beats an error row, then the later measured_utc
/// wins, and on a tie the destination's row is kept. Published measurements are matched by id:
/// a new id is added (stamped with the merge time), one stored with other content is a conflict
/// and the destination's record is kept. All-or-nothing: one transaction. Throws
/// InvalidInput naming the file for a source of another schema version.
MergeSummary merge_into(DatasetStore& destination, const std::string& source_path);

/// Opens or creates `destination_path` and merges `source_paths` into it in order.
MergeSummary merge_datasets(const std::string& destination_path,
                            const std::vector<std::string>& source_paths);

}  // namespace nnergy::dataset
