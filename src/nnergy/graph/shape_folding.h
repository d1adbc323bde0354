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

/// The newest default-domain opset the linked ONNX library has operator schemas for (17 for
/// Debian 12's ONNX 1.12).
int highest_known_opset();

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

/// A count that depends on the data (how many elements a NonZero finds, how many boxes a
/// NonMaxSuppression keeps), as the importer fixed it.
struct DataDependentCount {
  std::string node;     ///< the node's name
  std::string op_type;  ///< NonZero, NonMaxSuppression, Compress
  std::int64_t count = 0;
  bool given = false;  ///< from the caller's overrides; else the upper bound (see below)
};

/// The counts of data-dependent operators: overrides by node name, and what was assumed.
struct DataDependentCounts {
  std::map<std::string, std::int64_t> overrides;
  std::vector<DataDependentCount> fixed;  ///< filled by fold_shape_computations
};

/// Evaluates, in rounds of shape inference, every node whose value can be computed before the
/// network runs (Shape/Size of statically shaped tensors, integer initializers, Constant nodes,
/// scalar float initializers, and the operators of constant_tensor.h on them) and replaces each
/// such node, in place, by a Constant node with the same name and output; a Split of a constant
/// keeps its node, its outputs' values are known. Node order and count are unchanged. Every graph
/// input must already have static dimensions. The outputs of data-dependent operators get a
/// count: `counts->overrides[node name]` when given, else the upper bound (NonZero: every
/// element of its input; NonMaxSuppression: batches × classes × min(boxes,
/// max_output_boxes_per_class); Compress: the whole axis), so that the model's own limits
/// downstream (TopK's k, a Slice to a fixed count) decide the sizes that matter; each is listed
/// in `counts->fixed`.
void fold_shape_computations(onnx::ModelProto& model, DataDependentCounts* counts = nullptr);

/// Removes Constant nodes whose output no node reads and that are not graph outputs.
void remove_unused_constants(onnx::ModelProto& model);

}  // namespace nnergy::graph
