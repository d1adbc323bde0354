#pragma once

#include <filesystem>

#include "nnergy/report/zoo_report.h"

namespace nnergy::api {

/// What `nnergy zoo` lists.
struct ZooRequest {
  /// The data directory whose zoo/ is listed; empty: nnergy's (core/data_directory.h).
  std::filesystem::path data_dir;
};

/// Imports every model of the zoo (batch dimensions left unbound) and describes it: its data
/// inputs, operations and unique operations (graph::unique_operations: shape arithmetic left
/// out), parameters and inference multiply-accumulates per sample. Throws what the importer
/// throws for a broken zoo file. Thread-safe (no shared state).
report::ZooReport zoo(const ZooRequest& request = {});

}  // namespace nnergy::api
