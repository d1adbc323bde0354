#include "nnergy/graph/op_signature.h"

#include <unordered_map>

#include "nnergy/graph/op_catalog.h"

namespace nnergy::graph {

namespace {

char role_letter(TensorRole role) {
  switch (role) {
    case TensorRole::kDataInput:
      return 'd';
    case TensorRole::kParameter:
      return 'w';
    case TensorRole::kBuffer:
      return 'b';
    case TensorRole::kConstant:
      return 'c';
    case TensorRole::kActivation:
      return 'x';
  }
  return 'x';
}

}  // namespace

std::string op_signature(const Network& network, const Node& node) {
  std::string signature = node.op_type;
  DataType dtype = DataType::kOther;
  for (std::size_t i : node.outputs) {
    dtype = network.tensor(i).dtype;
    break;
  }
  signature += ' ';
  signature += to_string(dtype);
  std::string grad;
  for (std::size_t i : node.inputs) {
    const TensorInfo& t = network.tensor(i);
    signature += ' ';
    signature += role_letter(t.role);
    signature += to_string(t.shape);
    grad += t.requires_grad ? '1' : '0';
  }
  signature += " {";
  bool first = true;
  for (const auto& [key, value] : node.attributes) {
    if (!first) signature += ", ";
    first = false;
    signature += key + "=" + to_string(value);
  }
  signature += "} grad=" + grad;
  return signature;
}

std::vector<UniqueOperation> unique_operations(const Network& network, const Whitelist& whitelist) {
  std::vector<UniqueOperation> unique;
  std::unordered_map<std::string, std::size_t> position;
  const auto& nodes = network.nodes();
  for (std::size_t n = 0; n < nodes.size(); ++n) {
    if (op_cost(network, nodes[n]).op_class == OpClass::kShape) continue;
    std::string signature = op_signature(network, nodes[n]);
    auto [it, inserted] = position.emplace(signature, unique.size());
    if (inserted) {
      UniqueOperation op;
      op.signature = std::move(signature);
      op.op_type = nodes[n].op_type;
      op.whitelisted = whitelist.contains(nodes[n].op_type);
      unique.push_back(std::move(op));
    }
    unique[it->second].nodes.push_back(n);
  }
  return unique;
}

}  // namespace nnergy::graph
