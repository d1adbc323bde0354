#include "nnergy/dataset/op_record.h"

#include <nlohmann/json.hpp>
#include <variant>

#include "nnergy/graph/op_catalog.h"
#include "nnergy/graph/op_signature.h"

namespace nnergy::dataset {

namespace {

std::string_view role_name(graph::TensorRole role) {
  switch (role) {
    case graph::TensorRole::kDataInput:
      return "data";
    case graph::TensorRole::kParameter:
      return "parameter";
    case graph::TensorRole::kBuffer:
      return "buffer";
    case graph::TensorRole::kConstant:
      return "constant";
    case graph::TensorRole::kActivation:
      return "activation";
  }
  return "activation";
}

}  // namespace

OpRecord op_record(const graph::Network& network, const graph::Node& node,
                   const graph::Whitelist& whitelist) {
  const graph::OpCost cost = graph::op_cost(network, node);
  OpRecord record;
  record.signature = graph::op_signature(network, node);
  record.op_type = node.op_type;
  record.op_class = std::string(graph::to_string(cost.op_class));
  // The same dtype op_signature uses: the first output's.
  record.dtype = node.outputs.empty()
                     ? std::string(graph::to_string(graph::DataType::kOther))
                     : std::string(graph::to_string(network.tensor(node.outputs.front()).dtype));

  nlohmann::ordered_json inputs = nlohmann::ordered_json::array();
  for (std::size_t i : node.inputs) {
    const graph::TensorInfo& t = network.tensor(i);
    inputs.push_back({{"role", role_name(t.role)},
                      {"shape", t.shape},
                      {"dtype", graph::to_string(t.dtype)},
                      {"requires_grad", t.requires_grad}});
  }
  record.input_shapes_json = inputs.dump();

  nlohmann::ordered_json attributes = nlohmann::ordered_json::object();
  for (const auto& [key, value] : node.attributes) {
    // An init-capture, not `&key`: clang before 16 cannot capture a structured binding.
    std::visit([&attributes, &name = key](const auto& v) { attributes[name] = v; }, value);
  }
  record.attributes_json = attributes.dump();

  record.whitelisted = whitelist.contains(node.op_type);
  record.known = cost.known;
  record.parameter_count = cost.parameter_count;
  record.inference = cost.inference;
  record.training_forward = cost.training_forward;
  record.backward = cost.backward;
  return record;
}

OpRecord op_record(const graph::Network& network, const graph::Node& node) {
  return op_record(network, node, graph::Whitelist::standard());
}

}  // namespace nnergy::dataset
