#pragma once

// Builds a Network IR directly, without ONNX shape inference, for cost tests of operators the
// installed ONNX release cannot infer (newer opsets) or of inputs it would reject first.
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "nnergy/graph/network.h"

namespace nnergy::graph::testing {

class TinyNetwork {
 public:
  /// Adds a tensor; parameters (floating point) need a gradient in training.
  std::size_t tensor(const std::string& name, Shape shape,
                     TensorRole role = TensorRole::kActivation,
                     DataType dtype = DataType::kFloat32) {
    TensorInfo t;
    t.name = name;
    t.shape = std::move(shape);
    t.role = role;
    t.dtype = dtype;
    return net_.add_tensor(std::move(t));
  }
  /// Adds a node reading and writing tensors added before.
  TinyNetwork& node(const std::string& op, std::vector<std::size_t> inputs,
                    std::vector<std::size_t> outputs, Attributes attributes = {}) {
    Node n;
    n.name = "/" + op + std::to_string(net_.nodes().size());
    n.op_type = op;
    n.inputs = std::move(inputs);
    n.outputs = std::move(outputs);
    n.attributes = std::move(attributes);
    net_.add_node(std::move(n));
    return *this;
  }
  /// The finished network (gradient and shape flags propagated).
  Network done() {
    net_.propagate_tensor_flags();
    return net_;
  }

 private:
  Network net_;
};

}  // namespace nnergy::graph::testing
