#pragma once

// Values of the small tensors that carry a network's shape arithmetic (Shape → Gather → Concat →
// Reshape chains, masks, scales), and an evaluator for the ONNX operators that compute them.
// The importer uses it to fold shape computations into constants before shape inference.

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace nnergy::graph {

/// A tensor whose value is known before the network runs. Integer and boolean element types
/// keep exact 64-bit values in `integers`; floating types keep doubles in `reals`.
struct ConstantTensor {
  std::int32_t elem_type = onnx::TensorProto_DataType_INT64;  ///< onnx::TensorProto_DataType
  std::vector<std::int64_t> dims;
  std::vector<std::int64_t> integers;  ///< when !is_real()
  std::vector<double> reals;           ///< when is_real()

  bool is_real() const;
  std::size_t size() const;
  /// Element i as a double / as an integer (reals truncated toward zero).
  double real_at(std::size_t i) const;
  std::int64_t integer_at(std::size_t i) const;
  /// All elements as integers (for shape, axes and index operands).
  std::vector<std::int64_t> as_integers() const;
};

/// Largest tensor the evaluator computes (elements); larger values stay unknown.
inline constexpr std::size_t kMaxConstantElements = std::size_t{1} << 16;

/// True for the element types ConstantTensor can hold (integers, bool, float, double).
bool is_supported_constant_type(std::int32_t elem_type);

/// Reads a TensorProto with inline data (raw or typed fields). Returns nullopt for external or
/// missing data, unsupported element types, or more than kMaxConstantElements elements.
std::optional<ConstantTensor> read_constant(const onnx::TensorProto& proto);

/// The value of a Constant node (value, value_int(s), value_float(s)), or nullopt.
std::optional<ConstantTensor> constant_node_value(const onnx::NodeProto& node);

/// Writes `value` as a TensorProto named `name` (raw little-endian data).
onnx::TensorProto to_tensor_proto(const ConstantTensor& value, const std::string& name);

/// What the evaluator may read for one node: the value of input i (nullopt when unknown) and
/// the static shape of input i (nullopt when not fully known; Shape and Size need only this).
struct EvaluationInputs {
  std::function<std::optional<ConstantTensor>(std::size_t)> value;
  std::function<std::optional<std::vector<std::int64_t>>(std::size_t)> shape;
};

/// True when `op_type` (default domain) is an operator the evaluator can compute.
bool is_evaluable_op(const std::string& op_type);

/// The outputs of a Split `node` at `opset` whose input value is known (split sizes from its
/// input, attribute, or num_outputs / equal parts); nullopt otherwise.
std::optional<std::vector<ConstantTensor>> evaluate_split(const onnx::NodeProto& node, int opset,
                                                          const EvaluationInputs& inputs);

/// Computes the single output of `node` at `opset` when every operand it needs is known and the
/// result has at most kMaxConstantElements elements; nullopt otherwise (the node then stays in
/// the graph). Throws nothing for malformed nodes: they are left to shape inference to report.
std::optional<ConstantTensor> evaluate_node(const onnx::NodeProto& node, int opset,
                                            const EvaluationInputs& inputs);

}  // namespace nnergy::graph
