#pragma once

// Internal to nnergy::graph (not part of its interface): the resolved tensors of one node and
// the helpers that the cost families (op_catalog.cc, arithmetic_cost.cc, recurrent_cost.cc,
// einsum_cost.cc, ...) share.

#include <algorithm>
#include <cstddef>
#include <vector>

#include "nnergy/graph/node.h"
#include "nnergy/graph/op_cost.h"
#include "nnergy/graph/tensor.h"

namespace nnergy::graph {

/// The tensors of one node, resolved from the network. Absent optional inputs are not listed
/// (see Node::inputs), so slot i is the i-th *present* input. Pointers borrow from the Network,
/// which outlives the cost computation.
struct CostInput {
  const Node& node;
  std::vector<const TensorInfo*> in;
  std::vector<const TensorInfo*> out;

  /// Elements of input i (0 when absent).
  double in_elements(std::size_t i) const {
    return i < in.size() ? static_cast<double>(in[i]->elements()) : 0.0;
  }
  /// Elements of all outputs together.
  double out_elements() const {
    double total = 0;
    for (const TensorInfo* t : out) total += static_cast<double>(t->elements());
    return total;
  }
  /// Bytes of input i (0 when absent).
  double in_bytes(std::size_t i) const { return i < in.size() ? in[i]->bytes() : 0.0; }
  /// Bytes of all inputs together.
  double all_in_bytes() const {
    double total = 0;
    for (const TensorInfo* t : in) total += t->bytes();
    return total;
  }
  /// Bytes of all outputs together.
  double out_bytes() const {
    double total = 0;
    for (const TensorInfo* t : out) total += t->bytes();
    return total;
  }
  /// True when training computes a gradient for input i.
  bool needs_grad(std::size_t i) const { return i < in.size() && in[i]->requires_grad; }
  /// True when training computes a gradient for any input.
  bool any_grad() const {
    return std::any_of(in.begin(), in.end(), [](const TensorInfo* t) { return t->requires_grad; });
  }
  /// Bytes of the gradients written for the inputs that need one.
  double grad_in_bytes() const {
    double total = 0;
    for (const TensorInfo* t : in) total += t->requires_grad ? t->bytes() : 0.0;
    return total;
  }
  /// Number of inputs that need a gradient.
  std::size_t grad_inputs() const {
    return static_cast<std::size_t>(
        std::count_if(in.begin(), in.end(), [](const TensorInfo* t) { return t->requires_grad; }));
  }
};

/// A PassCost from its four fields: MACs, flops, bytes, kernel launches.
PassCost pass(double macs, double flops, double bytes, double kernels);

/// A known cost of class `op_class` whose inference and training forward passes are the same.
OpCost same_forward(OpClass op_class, PassCost forward, PassCost backward);

/// A known cost of class `op_class` that launches nothing (views, shape arithmetic).
OpCost no_cost(OpClass op_class);

/// Product of shape[from:] (1 when from >= rank).
double product(const Shape& shape, std::size_t from);

/// True when input i exists and its shape differs from the first output's: its gradient must be
/// summed back over the broadcast axes.
bool is_broadcast_input(const CostInput& c, std::size_t i);

/// The reduction autograd launches for input i when it was broadcast (at::sum_to in the
/// engine's output validation): reads an output-shaped gradient, writes input i's gradient, one
/// add per output element, one kernel. Empty when input i has the output's shape.
PassCost broadcast_gradient_reduction(const CostInput& c, std::size_t i);

}  // namespace nnergy::graph
