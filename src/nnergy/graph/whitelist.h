#pragma once

#include <set>
#include <string>
#include <string_view>

namespace nnergy::graph {

/// The operator types that carry the compute of a network (seed 000 §4.1). Operators outside
/// it are still listed and predicted, and flagged as such in every output.
class Whitelist {
 public:
  /// The default: convolutions, GEMM/MatMul, normalizations, activations, pooling, Softmax,
  /// Add/Mul and embedding Gather — the op kinds nnergy's profiler measures.
  static Whitelist standard();
  /// Parses a comma-separated list of ONNX operator types (spaces around the commas ignored).
  /// Each entry must be an operator type of nnergy's op catalog (is_known_op) or of the standard
  /// ONNX operator set (e.g. LRN, which the catalog predicts by its fallback), case-sensitive as
  /// in ONNX ("Conv", not "conv"); or a custom-domain type written "domain.Type" as the ONNX
  /// importer names it ("com.microsoft.FusedConv"), taken as given. Throws InvalidInput naming
  /// `flag` for an empty list, an entry that is not an operator name, or an unknown operator type
  /// (with "did you mean" the nearest known type when it is close).
  static Whitelist parse(std::string_view list, std::string_view flag);

  bool contains(std::string_view op_type) const { return ops_.count(std::string(op_type)) > 0; }
  const std::set<std::string>& ops() const { return ops_; }

 private:
  std::set<std::string> ops_;
};

}  // namespace nnergy::graph
