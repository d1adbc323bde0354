#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "nnergy/graph/network.h"
#include "nnergy/graph/op_cost.h"

namespace nnergy::graph {

/// Cost of `node` of `network`: MACs, flops, bytes and kernel launches for inference, for the
/// training forward pass and for the backward pass, and the parameters it reads. Operators
/// outside the catalog get the memory-bound fallback (one flop per output element, all inputs
/// and outputs moved once) with `known == false`; they are never dropped.
OpCost op_cost(const Network& network, const Node& node);

/// True when the catalog has a cost model for `op_type`.
bool is_known_op(std::string_view op_type);

/// Every operator type the catalog knows, sorted.
std::vector<std::string> known_op_types();

/// Optimizers whose update step nnergy costs in training mode.
enum class Optimizer { kSgd, kSgdMomentum, kAdam, kAdamW };

/// "sgd", "sgd-momentum", "adam", "adamw".
std::string_view to_string(Optimizer optimizer);
/// Parses the names above; throws InvalidInput naming `flag` otherwise.
Optimizer parse_optimizer(std::string_view name, std::string_view flag);

/// Cost of one optimizer step over `parameter_count` elements in `parameter_tensors` tensors of
/// `bytes_per_parameter` bytes each (PyTorch's multi-tensor "foreach" update: about one kernel
/// per 64 tensors and update stage).
PassCost optimizer_step_cost(Optimizer optimizer, double parameter_count,
                             std::size_t parameter_tensors, double bytes_per_parameter);

}  // namespace nnergy::graph
