#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "nnergy/graph/node.h"
#include "nnergy/graph/tensor.h"

namespace nnergy::graph {

/// The Network IR: tensors with static shapes and nodes in topological order.
/// Built by an importer; immutable afterwards except through the explicit transforms below.
class Network {
 public:
  std::string name;         ///< short name, e.g. "resnet50"
  std::string source;       ///< where it came from, e.g. the ONNX file path
  std::string description;  ///< one line, from the file's metadata when present
  std::int64_t batch = 1;   ///< the batch the shapes were computed for (samples per iteration)
  /// What the importer did that a user should know (e.g. a fixed batch re-bound), one line each.
  std::vector<std::string> import_notes;

  /// Adds a tensor and returns its index.
  std::size_t add_tensor(TensorInfo tensor);
  /// Adds a node; its inputs and outputs must already be tensors of this network.
  void add_node(Node node);

  const std::vector<TensorInfo>& tensors() const { return tensors_; }
  const std::vector<Node>& nodes() const { return nodes_; }
  const TensorInfo& tensor(std::size_t index) const { return tensors_.at(index); }

  /// Indices of the data inputs (not parameters).
  std::vector<std::size_t> data_inputs() const;
  /// Total number of trainable parameters (elements).
  std::int64_t parameter_count() const;
  /// Number of parameter tensors.
  std::size_t parameter_tensor_count() const;

  /// Sets attribute `key` of node `index` (importer passes use it to annotate nodes).
  void set_attribute(std::size_t index, const std::string& key, AttributeValue value);

  /// Changes the role of tensor `index` (importers use it to mark buffers).
  void set_role(std::size_t index, TensorRole role);

  /// Records the declared symbolic dimension names of tensor `index` (see TensorInfo).
  void set_dim_params(std::size_t index, std::vector<std::string> dim_params);

  /// Marks shape-valued tensors and gradient requirements (TensorInfo::shape_valued,
  /// TensorInfo::requires_grad) by one pass in topological order. Importers call it last.
  void propagate_tensor_flags();

  /// Changes every floating-point tensor to `dtype` (e.g. to predict an fp16 run of an fp32
  /// export).
  void cast_floating_tensors(DataType dtype);

  /// The floating-point type the file stores the network in: the type of most parameter
  /// elements, else (a network without parameters) of most data-input elements; nullopt when
  /// neither has a floating type (e.g. token ids in, no weights).
  std::optional<DataType> stored_floating_type() const;

 private:
  std::vector<TensorInfo> tensors_;
  std::vector<Node> nodes_;
};

}  // namespace nnergy::graph
