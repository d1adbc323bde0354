#pragma once

// Which axis of a model's data inputs is the batch: the axis along which samples are
// independent. A file exported without dynamic_axes names no axis, and exporters lay models out
// differently (PyTorch's nn.Transformer, nn.LSTM and nn.MultiheadAttention are sequence-first by
// default: (S, N, E)); torchvision's detection models take one image (C, H, W) and have no batch
// axis at all. Internal to nnergy::graph (batch_binding.cc uses it).

#include <onnx/onnx_pb.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace nnergy::graph {

/// One dimension of a Reshape or Expand target, as the batch changes it.
struct TargetDim {
  std::int64_t size = 0;   ///< its value in the file
  bool has_batch = false;  ///< it holds the batch as a factor (size / batch · new batch)
};

/// What happens to one candidate batch axis of the data inputs through a model.
struct BatchAxisTrace {
  std::size_t axis = 0;             ///< the axis tried, the same index in every data input
  std::int64_t size = 0;            ///< its size in the file
  std::vector<std::string> inputs;  ///< the data inputs that have it (rank > axis, that size)
  /// No node mixes elements across the axis: every node that reads it keeps it as an axis (or
  /// a factor of one) of its outputs, never reducing, contracting, convolving, normalising,
  /// selecting or recurring over it.
  bool independent = false;
  /// False when a node without a rule was reached first: nothing is known about the axis.
  bool known = true;
  /// When not independent (or not known): the node and what it does with the axis.
  std::string reason;
  /// The targets of the Reshape and Expand nodes that carry the axis, by node index: what each
  /// target dimension is in the file and whether it holds the batch.
  std::map<int, std::vector<TargetDim>> targets;
  /// The graph outputs that carry the axis, and where.
  std::map<std::string, std::size_t> output_axes;
};

/// Follows axis `axis` of the data inputs (those of rank > axis whose size there equals the first
/// such input's) through `model`, whose every tensor has a static shape (bound, folded and
/// inferred as exported). Each tensor derived from them is tracked as a list of axes, each a
/// product of factors, one of which is the batch; reshapes regroup the factors (never splitting
/// the batch's), transposes permute the axes, and each operator keeps, moves or mixes the batch
/// axis by its semantics (broadcasting, MatMul's rows and contraction, convolutions' and pooling's
/// N axis, recurrent layers' layout, reductions and softmax axes, concatenation, slicing,
/// gathering). Never throws for a malformed model (the trace says "not known").
BatchAxisTrace trace_batch_axis(const onnx::ModelProto& model,
                                const std::set<std::string>& data_inputs, std::size_t axis);

}  // namespace nnergy::graph
