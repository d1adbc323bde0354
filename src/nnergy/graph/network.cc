#include "nnergy/graph/network.h"

#include <algorithm>
#include <map>
#include <set>
#include <string_view>
#include <utility>

#include "nnergy/core/error.h"

namespace nnergy::graph {

namespace {

// Operators whose outputs never carry a gradient, whatever their inputs.
bool is_non_differentiable(std::string_view op_type) {
  static const std::set<std::string_view> kOps = {"Shape",
                                                  "Size",
                                                  "Equal",
                                                  "Greater",
                                                  "Less",
                                                  "GreaterOrEqual",
                                                  "LessOrEqual",
                                                  "Not",
                                                  "And",
                                                  "Or",
                                                  "ArgMax",
                                                  "ArgMin",
                                                  "Hardmax",
                                                  "NonZero",
                                                  "Range",
                                                  "ConstantOfShape",
                                                  "EyeLike",
                                                  "RandomNormalLike",
                                                  "RandomUniformLike"};
  return kOps.count(op_type) > 0;
}

}  // namespace

std::size_t Network::add_tensor(TensorInfo tensor) {
  tensors_.push_back(std::move(tensor));
  return tensors_.size() - 1;
}

void Network::add_node(Node node) {
  for (std::size_t index : node.inputs) {
    if (index >= tensors_.size()) throw InternalError("node " + node.name + ": input out of range");
  }
  for (std::size_t index : node.outputs) {
    if (index >= tensors_.size())
      throw InternalError("node " + node.name + ": output out of range");
  }
  nodes_.push_back(std::move(node));
}

std::vector<std::size_t> Network::data_inputs() const {
  std::vector<std::size_t> inputs;
  for (std::size_t i = 0; i < tensors_.size(); ++i) {
    if (tensors_[i].role == TensorRole::kDataInput) inputs.push_back(i);
  }
  return inputs;
}

std::int64_t Network::parameter_count() const {
  std::int64_t count = 0;
  for (const TensorInfo& t : tensors_) {
    if (t.role == TensorRole::kParameter) count += t.elements();
  }
  return count;
}

std::size_t Network::parameter_tensor_count() const {
  return static_cast<std::size_t>(
      std::count_if(tensors_.begin(), tensors_.end(),
                    [](const auto& t) { return t.role == TensorRole::kParameter; }));
}

void Network::set_role(std::size_t index, TensorRole role) { tensors_.at(index).role = role; }

void Network::set_dim_params(std::size_t index, std::vector<std::string> dim_params) {
  tensors_.at(index).dim_params = std::move(dim_params);
}

void Network::propagate_tensor_flags() {
  for (TensorInfo& t : tensors_) {
    t.requires_grad = t.role == TensorRole::kParameter && is_floating(t.dtype);
    // Integer constants and the outputs of Shape are the roots of shape arithmetic.
    t.shape_valued = t.role == TensorRole::kConstant && !is_floating(t.dtype);
  }
  for (const Node& node : nodes_) {
    bool any_grad = false;
    bool all_shape = !node.inputs.empty();
    for (std::size_t in : node.inputs) {
      any_grad = any_grad || tensors_[in].requires_grad;
      all_shape =
          all_shape && (tensors_[in].shape_valued || tensors_[in].role == TensorRole::kConstant);
    }
    const bool shape_op = node.op_type == "Shape" || node.op_type == "Size";
    for (std::size_t out : node.outputs) {
      TensorInfo& t = tensors_[out];
      t.requires_grad = any_grad && is_floating(t.dtype) && !is_non_differentiable(node.op_type);
      // A Constant (no inputs) keeps the role rule: integer constants are shape arithmetic.
      const bool constant_root = node.inputs.empty() && t.role == TensorRole::kConstant;
      t.shape_valued = !is_floating(t.dtype) && (shape_op || all_shape || constant_root);
    }
  }
}

void Network::cast_floating_tensors(DataType dtype) {
  for (TensorInfo& t : tensors_) {
    if (is_floating(t.dtype)) t.dtype = dtype;
  }
}

void Network::set_attribute(std::size_t index, const std::string& key, AttributeValue value) {
  nodes_.at(index).attributes[key] = std::move(value);
}

std::optional<DataType> Network::stored_floating_type() const {
  for (const TensorRole role : {TensorRole::kParameter, TensorRole::kDataInput}) {
    std::map<DataType, std::int64_t> elements;
    for (const TensorInfo& t : tensors_) {
      if (t.role == role && is_floating(t.dtype)) elements[t.dtype] += t.elements();
    }
    if (elements.empty()) continue;
    return std::max_element(elements.begin(), elements.end(),
                            [](const auto& a, const auto& b) { return a.second < b.second; })
        ->first;
  }
  return std::nullopt;
}

}  // namespace nnergy::graph
