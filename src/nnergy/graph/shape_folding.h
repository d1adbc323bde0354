#pragma once

// Folding of a model's shape arithmetic into constants, inside the importer: exporters compute
// Reshape targets, paddings, slice bounds and masks at run time from Shape nodes, through
// operators that ONNX shape inference cannot follow (Range, ConstantOfShape, Where, Div on
// shapes, ...). Once every input dimension is bound these values are constants.

#include <onnx/onnx_pb.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace nnergy::graph {

/// Static shapes by tensor name, from shape inference (only fully known shapes are listed).
using StaticShapes = std::map<std::string, std::vector<std::int64_t>>;

/// The default-domain opset the model imports (1 when absent).
int default_opset(const onnx::ModelProto& model);

/// Runs ONNX shape inference (with data propagation) on `model`; `strict` throws on the first
/// error, otherwise inference does what it can. Clears stale value_info first, keeping the
/// shapes nnergy inferred itself where ONNX 1.12 has no rule (Einsum output sizes).
void infer_shapes(onnx::ModelProto& model, bool strict);

/// The output shape of an Einsum `equation` (explicit "->" or implicit output, "..." for
/// broadcast dimensions) applied to `inputs`, or nullopt when it does not fit them.
std::optional<std::vector<std::int64_t>> einsum_output_shape(
    const std::string& equation, const std::vector<std::vector<std::int64_t>>& inputs);

/// The static shapes `model` carries in its inputs, value_info, outputs and initializers.
StaticShapes static_shapes(const onnx::ModelProto& model);

/// Evaluates, in rounds of shape inference, every node whose value can be computed before the
/// network runs (Shape/Size of statically shaped tensors, integer initializers, Constant nodes,
/// scalar float initializers, and the operators of constant_tensor.h on them) and replaces each
/// such node, in place, by a Constant node with the same name and output. Node order and count
/// are unchanged. Every graph input must already have static dimensions.
void fold_shape_computations(onnx::ModelProto& model);

/// Removes Constant nodes whose output no node reads and that are not graph outputs.
void remove_unused_constants(onnx::ModelProto& model);

}  // namespace nnergy::graph
