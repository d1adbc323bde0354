#pragma once

// Binding of a model's batch and other symbolic dimensions before shape inference, including
// the re-binding of a batch that the exporter fixed in the file (torch.onnx.export without
// dynamic_axes writes the example input's batch into every shape).

#include <onnx/onnx_pb.h>

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "nnergy/graph/onnx_importer.h"

namespace nnergy::graph {

/// A model prepared for building the IR: every dimension bound, shape arithmetic folded, and
/// strict shape inference done.
struct PreparedModel {
  onnx::ModelProto model;
  std::int64_t batch = 1;  ///< the batch computed (the leading dimension of the data inputs)
  std::vector<std::string> notes;  ///< what the preparation did that a user should know
};

/// Binds `bindings` to `model`'s data inputs (see DimBindings), folds shape computations and
/// runs strict shape inference. When a data input's leading dimension is fixed in the file and
/// `bindings.batch` asks for another value, re-binds it, adjusts Reshape and Expand targets that
/// hard-code the exported batch, and checks that every activation either scales with the batch
/// or does not depend on it; where that cannot be done soundly, throws InvalidInput naming the
/// file, the fixed value and the `torch.onnx.export(..., dynamic_axes=...)` fix.
PreparedModel prepare_model(const onnx::ModelProto& model, const std::string& source,
                            const std::set<std::string>& data_inputs, const DimBindings& bindings);

}  // namespace nnergy::graph
