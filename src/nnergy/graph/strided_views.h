#pragma once

#include <cstddef>

#include "nnergy/graph/network.h"

namespace nnergy::graph {

/// The attribute mark_strided_views sets (to 1) on a Transpose that eager PyTorch runs as a
/// view; the op catalog costs such a node as a view (no kernel, no bytes).
inline constexpr const char* kStridedViewAttribute = "nnergy.strided_view";

/// Marks each Transpose that eager PyTorch does not copy: in PyTorch `transpose`/`permute` are
/// views, and a copy happens only where a later kernel needs contiguous memory. torch.onnx.export
/// writes the view as a Transpose node, which the op catalog otherwise costs as a copy. A
/// Transpose is a view here when every node reading it is a MatMul and the permuted tensor,
/// taken as a permuted view of its (contiguous) input, is an operand cuBLAS's strided-batched
/// GEMM reads in place: one of its last two axes is the input's innermost (unit-stride) axis,
/// and its leading (batch) axes merge into one axis of constant stride, as at::matmul's reshape
/// needs for a view. So attention's `q @ k.transpose(-2, -1)` on a head-first tensor and
/// nn.MultiheadAttention's bmm are views, while Hugging Face's (B, S, H, D) → (B, H, D, S)
/// permute stays a copy (at::matmul copies it, as its batch axes do not merge). Returns the
/// number of nodes marked.
std::size_t mark_strided_views(Network& network);

}  // namespace nnergy::graph
