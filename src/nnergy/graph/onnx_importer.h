#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>

#include "nnergy/core/setting_name.h"
#include "nnergy/graph/network.h"

namespace nnergy::graph {

/// Values for the symbolic dimensions of a model's inputs.
struct DimBindings {
  /// The batch: bound to the leading symbolic dimension of every data input. When the file
  /// fixes the leading dimension at another value, the importer re-binds it (see prepare_model
  /// in batch_binding.h) or refuses. Unset: the file's fixed batch, or 1 for a symbolic one.
  std::optional<std::int64_t> batch;
  /// Other symbolic dimensions by name (`--dim NAME=VALUE`); a name listed here also overrides
  /// the batch rule for that dimension.
  std::map<std::string, std::int64_t> named;
  /// How messages name `batch` and `named` (flags for the CLI, keywords for Python).
  SettingNames names = SettingNames::kFlag;
};

/// Reads an ONNX model, binds its symbolic dimensions (re-binding a batch fixed in the file when
/// `bindings.batch` differs), folds its shape arithmetic into constants, runs ONNX shape
/// inference (with data propagation, strict mode), builds the Network IR and fuses decomposed
/// operators (see op_fusion.h); Network::batch is
/// the batch computed and Network::import_notes says what was re-bound. Parameters are the
/// initializers plus every graph input not named in the `nnergy.data_inputs` metadata entry
/// (without that entry: inputs that are not initializers are data when the model has initializers;
/// otherwise the inputs with a symbolic dimension, or the first input, are data).
///
/// Throws InvalidInput, naming the file, when it is missing, unreadable, not an ONNX model,
/// has an unbound symbolic dimension, has a tensor whose shape cannot be inferred, or fixes a
/// batch that cannot be re-bound soundly (the message gives the torch.onnx.export fix).
Network import_onnx(const std::filesystem::path& path, const DimBindings& bindings);

/// The newest default-domain ONNX opset the importer knows the operators of (its ONNX library's;
/// 17 for Debian 12's ONNX 1.12): exports at a newer opset use operator versions whose shapes
/// it cannot infer.
int newest_importable_opset();

/// Whether the importer replaces decomposed operators (LayerNorm, GELU, SiLU, ... as exporters
/// write them) by the one operator eager PyTorch runs (see op_fusion.h).
enum class Fusion { kFuseDecomposedOps, kKeepDecomposedOps };

/// As import_onnx, from the serialized bytes of a model; `source` names it in messages.
Network import_onnx_bytes(const std::string& bytes, const std::string& source,
                          const DimBindings& bindings, Fusion fusion = Fusion::kFuseDecomposedOps);

}  // namespace nnergy::graph
