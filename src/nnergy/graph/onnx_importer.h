#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>

#include "nnergy/graph/network.h"

namespace nnergy::graph {

/// Values for the symbolic dimensions of a model's inputs.
struct DimBindings {
  /// Bound to the leading symbolic dimension of every data input (the batch axis).
  std::int64_t batch = 1;
  /// Other symbolic dimensions by name (`--dim NAME=VALUE`); a name listed here also overrides
  /// the batch rule for that dimension.
  std::map<std::string, std::int64_t> named;
};

/// Reads an ONNX model, binds its symbolic dimensions, runs ONNX shape inference (with data
/// propagation, strict mode) and builds the Network IR. Parameters are the initializers plus
/// every graph input not named in the `nnergy.data_inputs` metadata entry (without that entry:
/// inputs that are not initializers are data when the model has initializers; otherwise the
/// inputs with a symbolic dimension, or the first input, are data).
///
/// Throws InvalidInput, naming the file, when it is missing, unreadable, not an ONNX model,
/// has an unbound symbolic dimension, or has a tensor whose shape cannot be inferred.
Network import_onnx(const std::filesystem::path& path, const DimBindings& bindings);

/// As import_onnx, from the serialized bytes of a model; `source` names it in messages.
Network import_onnx_bytes(const std::string& bytes, const std::string& source,
                          const DimBindings& bindings);

}  // namespace nnergy::graph
