#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace nnergy::graph {

/// A model of the zoo: data/zoo/<name>.onnx.
struct ZooModel {
  std::string name;
  std::filesystem::path path;
};

/// The zoo's models in `data_dir`/zoo, sorted by name.
std::vector<ZooModel> list_zoo(const std::filesystem::path& data_dir);

/// Resolves a zoo name or a path to an .onnx file. An argument that ends in ".onnx" or contains
/// a '/' is a path and returned as is (the importer reports a missing file); anything else must
/// be a zoo name, else InvalidInput lists the zoo.
std::filesystem::path resolve_model(const std::string& name_or_path,
                                    const std::filesystem::path& data_dir);

}  // namespace nnergy::graph
