#pragma once

#include <cstddef>
#include <map>
#include <string>

#include "nnergy/graph/network.h"

namespace nnergy::graph {

/// What fuse_decomposed_ops replaced.
struct FusionReport {
  /// One fused operator type.
  struct Count {
    std::size_t groups = 0;  ///< groups replaced by one node of this type
    std::size_t nodes = 0;   ///< nodes those groups held (Constant nodes not counted)
  };
  /// By fused operator type ("LayerNormalization", "Gelu", "Swish", "HardSwish",
  /// "HardSigmoid", "Softmax", "LogSoftmax"); only types that were fused at least once appear.
  std::map<std::string, Count> fused;

  /// Total number of fused groups.
  std::size_t total_groups() const;
  /// One line for a note in the output, e.g. "fused 24 LayerNormalization (216 nodes),
  /// 24 Gelu (120 nodes)"; "no decomposed operators fused" when nothing was.
  std::string summary() const;
};

/// Returns a copy of `network` in which each chain of nodes that `torch.onnx.export` (torch
/// 1.13–2.x, opsets 11–18) writes for one eager PyTorch kernel is replaced by ONE node of that
/// operator, so that the op catalog costs one kernel (forward and backward) instead of one per
/// decomposed node:
///
/// - LayerNorm: ReduceMean → Sub → [Cast] → Pow(2) or Mul(d, d) → ReduceMean → Add(eps) → Sqrt
///   → Div → [Cast] → [Mul(gamma) → [Add(beta)]] ⇒ `LayerNormalization` (x, gamma, beta);
/// - GELU, erf form: Div(x, √2) or Mul(x, 1/√2) → Erf → Add(1) → the two multiplications by x
///   and 0.5 in any order ⇒ `Gelu`; tanh form: Pow(x, 3) or Mul(x, Mul(x, x)) → Mul(0.044715)
///   → Add(x) → Mul(√(2/π)) → Tanh → Add(1) → multiplications by x and 0.5 ⇒ `Gelu` with
///   attribute approximate = "tanh";
/// - SiLU: Sigmoid(x) → Mul(x, ·) ⇒ `Swish`;
/// - HardSwish: Add(x, 3) → Clip(0, 6) → Div(6) or Mul(1/6) → Mul(x, ·), or the Mul(x, ·)
///   before the division; HardSigmoid(x, alpha = 1/6) → Mul(x, ·) ⇒ `HardSwish`;
/// - HardSigmoid: Add(x, 3) → Clip(0, 6) → Div(6) or Mul(1/6) ⇒ `HardSigmoid`;
/// - Softmax written out when the exporter did not know the input rank: ReduceMax → Sub → Exp
///   → ReduceSum → Div ⇒ `Softmax`; and over a non-last axis below opset 13: Transpose →
///   Softmax | LogSoftmax → Transpose ⇒ one `Softmax` | `LogSoftmax` over that axis.
///
/// A group is fused only when every intermediate tensor is read by nodes of the group alone
/// and is not a graph output (a tensor no node reads counts as one), and every constant
/// operand is a scalar with no producer (an initializer or a non-data input) or produced by a
/// Constant node; LayerNorm's gamma and beta must be such fixed tensors of the normalised
/// shape, else the affine part stays separate. The IR holds no
/// tensor values, so constants are checked by shape, not value; Clip bounds and HardSigmoid
/// alpha/beta are checked when they are attributes. A hand-written formula (e.g. Hugging
/// Face's `gelu_new`) exports to the same nodes as the library operator and is fused too,
/// although eager PyTorch runs it as several kernels.
///
/// Scaling and masking before a Softmax are left as they are (see op_fusion.cc: eager
/// attention runs them as separate kernels).
///
/// The fused node takes the group's external inputs and its final output tensor; its
/// module_path is the common module path of the group's nodes and its name the last node's
/// scope plus the fused type (e.g. "/encoder/layer.0/output/LayerNorm/LayerNormalization").
/// Unfused nodes keep their order; Constant nodes and tensors that only the fused groups used
/// are dropped; tensor flags are recomputed. `report`, when given, receives what was fused.
/// Pure function of its arguments; thread-safe.
Network fuse_decomposed_ops(const Network& network, FusionReport* report = nullptr);

}  // namespace nnergy::graph
