#include "nnergy/graph/op_descriptor.h"

#include "nnergy/graph/op_catalog.h"
#include "nnergy/graph/op_signature.h"

namespace nnergy::graph {

OpDescriptor describe_op(const Network& network, const Node& node, const Whitelist& whitelist) {
  const OpCost cost = op_cost(network, node);
  OpDescriptor op;
  op.signature = op_signature(network, node);
  op.op_type = node.op_type;
  op.op_class = cost.op_class;
  // The same dtype op_signature uses: the first output's.
  op.dtype = node.outputs.empty() ? DataType::kOther : network.tensor(node.outputs.front()).dtype;
  op.inputs.reserve(node.inputs.size());
  for (std::size_t i : node.inputs) {
    const TensorInfo& t = network.tensor(i);
    op.inputs.push_back({t.role, t.shape, t.dtype, t.requires_grad});
  }
  op.attributes = node.attributes;
  op.whitelisted = whitelist.contains(node.op_type);
  op.known = cost.known;
  op.parameter_count = cost.parameter_count;
  op.inference = cost.inference;
  op.training_forward = cost.training_forward;
  op.backward = cost.backward;
  return op;
}

}  // namespace nnergy::graph
