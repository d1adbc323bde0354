#pragma once

#include <cstddef>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace nnergy::report {

/// One model of the zoo as `nnergy zoo` lists it.
struct ZooEntry {
  std::string name;            ///< the zoo name (`nnergy predict NAME`)
  std::string description;     ///< the file's doc string
  std::string inputs;          ///< data inputs: "input [batch, 3, 224, 224] fp32", comma-separated
  std::size_t operations = 0;  ///< nodes, shape arithmetic left out
  std::size_t unique_operations = 0;  ///< of those, distinct (graph::unique_operations)
  double parameter_count = 0;         ///< parameter elements
  double mac_count_per_sample =
      0;  ///< convolution, GEMM and MatMul multiply-accumulates, inference
};

/// Everything `nnergy zoo` shows.
struct ZooReport {
  std::filesystem::path directory;  ///< the zoo folder listed
  std::vector<ZooEntry> models;     ///< sorted by name
};

/// Header line and one table row per model (params in M, GMACs).
std::string render_text(const ZooReport& report);
/// JSON array, one object per model: name, description, inputs, operations, unique_operations,
/// parameter_count, mac_count_per_sample.
nlohmann::ordered_json to_json(const ZooReport& report);

}  // namespace nnergy::report
