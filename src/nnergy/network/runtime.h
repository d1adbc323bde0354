#pragma once

// How the framework runs the network's kernels: eager PyTorch launching each kernel from the
// host, CUDA graphs replaying them without host launches, or torch.compile (Inductor) fusing
// pointwise chains into fewer kernels.

#include <string>
#include <string_view>
#include <vector>

#include "nnergy/graph/network.h"
#include "nnergy/graph/op_cost.h"

namespace nnergy::network {

enum class Runtime {
  kEager,       ///< one host launch per kernel (PyTorch's default)
  kCudaGraphs,  ///< captured once, replayed: no per-kernel host launch
  kCompiled,    ///< torch.compile (Inductor, default mode): pointwise chains fused
};

/// "eager", "cuda-graphs", "compiled".
std::string_view to_string(Runtime runtime);
/// Parses to_string's names; anything else is InvalidInput naming `setting`.
Runtime parse_runtime(std::string_view name, std::string_view setting);

/// Host time per kernel launch of Inductor's generated wrapper, as a fraction of eager
/// PyTorch's: the wrapper calls each Triton or library kernel directly, without the eager
/// dispatcher. An estimate (no measurement of it in nnergy's data); said in the output.
inline constexpr double kCompiledLaunchShare = 0.35;

/// The share of the host's eager launch time per kernel that `runtime` spends: 1 (eager), 0
/// (CUDA graphs: one replay per iteration, no per-kernel launch), kCompiledLaunchShare.
double launch_share(Runtime runtime);

/// What compiled fusion did to a network.
struct CompiledFusion {
  std::size_t fused_nodes = 0;  ///< nodes whose kernel joined a neighbour's
  double kernels_removed = 0;   ///< inference kernels removed
  double bytes_removed = 0;     ///< inference bytes no longer written and read back
  /// Per node: "" when untouched, else a tag that distinguishes its adjusted cost from an
  /// untouched node of the same signature (CostedNetwork's unique operations).
  std::vector<std::string> tags;
};

/// Applies Inductor's default fusions to the costs of `network`'s nodes (one OpCost per node,
/// in node order): a pointwise node (OpClass::kElementwise) whose data input is produced by a
/// pointwise or normalization node and read by nothing else joins that node's kernel (the
/// intermediate tensor is neither written nor read back: its bytes leave both nodes, the
/// consumer's kernels go to 0), and a pointwise node read only by a normalization (softmax,
/// layer norm) is fused into it the same way. Matrix operators (cuBLAS/cuDNN) keep their own
/// kernels and epilogues, as in Inductor's default mode. The backward pass is adjusted in
/// proportion (its pointwise gradients fuse the same way). Pure function.
CompiledFusion fuse_compiled(const graph::Network& network, std::vector<graph::OpCost>& costs);

/// One line for a prediction's notes: how `runtime` was modelled and, compiled, what fusion
/// removed (e.g. "runtime compiled (torch.compile, Inductor's default mode): 48 pointwise nodes
/// fused into their neighbours' kernels, 48 kernels and 310 MB fewer per inference; host launch
/// per kernel estimated at 35 % of eager PyTorch's").
std::string runtime_summary(Runtime runtime, const CompiledFusion& fusion);

}  // namespace nnergy::network
