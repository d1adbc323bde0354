#include "nnergy/graph/strided_views.h"

#include <cstdint>
#include <vector>

namespace nnergy::graph {

namespace {

// Whether the tensor `perm` makes of a contiguous tensor of shape `in` is a strided-batched GEMM
// operand: unit stride on one of its last two axes, and batch axes that merge into one.
bool is_gemm_operand_view(const Shape& in, const std::vector<std::int64_t>& perm) {
  const std::size_t rank = in.size();
  if (rank < 2 || perm.size() != rank) return false;
  std::vector<std::int64_t> stride(rank, 1);
  for (std::size_t i = rank - 1; i > 0; --i) stride[i - 1] = stride[i] * in[i];
  std::vector<bool> seen(rank, false);
  for (const std::int64_t p : perm) {
    if (p < 0 || static_cast<std::size_t>(p) >= rank || seen[static_cast<std::size_t>(p)]) {
      return false;
    }
    seen[static_cast<std::size_t>(p)] = true;
  }
  const auto size_of = [&](std::size_t axis) { return in[static_cast<std::size_t>(perm[axis])]; };
  const auto stride_of = [&](std::size_t axis) {
    return stride[static_cast<std::size_t>(perm[axis])];
  };
  const bool unit_inner = stride_of(rank - 1) == 1 || stride_of(rank - 2) == 1 ||
                          size_of(rank - 1) == 1 || size_of(rank - 2) == 1;
  if (!unit_inner) return false;
  // Batch axes of size 1 do not matter; the others must nest, outer stride = inner size·stride.
  std::int64_t inner_size = 0;
  std::int64_t inner_stride = 0;
  for (std::size_t axis = rank - 2; axis-- > 0;) {
    if (size_of(axis) == 1) continue;
    if (inner_size != 0 && stride_of(axis) != inner_size * inner_stride) return false;
    inner_size = size_of(axis);
    inner_stride = stride_of(axis);
  }
  return true;
}

}  // namespace

std::size_t mark_strided_views(Network& network) {
  const std::vector<Node>& nodes = network.nodes();
  std::vector<std::vector<std::size_t>> readers(network.tensors().size());
  for (std::size_t n = 0; n < nodes.size(); ++n) {
    for (const std::size_t t : nodes[n].inputs) readers[t].push_back(n);
  }
  std::vector<std::size_t> marked;
  for (std::size_t n = 0; n < nodes.size(); ++n) {
    const Node& node = nodes[n];
    if (node.op_type != "Transpose" || node.inputs.size() != 1 || node.outputs.size() != 1) {
      continue;
    }
    const std::vector<std::size_t>& read_by = readers[node.outputs[0]];
    if (read_by.empty()) continue;
    bool all_matmul = true;
    for (const std::size_t r : read_by) all_matmul = all_matmul && nodes[r].op_type == "MatMul";
    if (!all_matmul) continue;
    const Shape& in = network.tensor(node.inputs[0]).shape;
    std::vector<std::int64_t> perm = node.ints_attribute("perm", {});
    if (perm.empty()) {  // ONNX's default reverses the axes
      for (std::size_t i = in.size(); i-- > 0;) perm.push_back(static_cast<std::int64_t>(i));
    }
    if (is_gemm_operand_view(in, perm)) marked.push_back(n);
  }
  for (const std::size_t n : marked) network.set_attribute(n, kStridedViewAttribute, 1);
  return marked.size();
}

}  // namespace nnergy::graph
