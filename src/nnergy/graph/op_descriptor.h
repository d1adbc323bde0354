#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "nnergy/graph/data_type.h"
#include "nnergy/graph/network.h"
#include "nnergy/graph/node.h"
#include "nnergy/graph/op_cost.h"
#include "nnergy/graph/tensor.h"
#include "nnergy/graph/whitelist.h"

namespace nnergy::graph {

/// One input of an operation, as its description keeps it.
struct OpInput {
  TensorRole role = TensorRole::kActivation;
  Shape shape;
  DataType dtype = DataType::kFloat32;
  bool requires_grad = false;  ///< training computes a gradient for it

  bool operator==(const OpInput&) const = default;
};

/// An operation without its network: its type, inputs and attributes, and the catalog's cost of
/// it. What a dataset stores of each unique operation (dataset::OpRecord) and what the feature
/// encoder encodes; nodes with the same signature have the same description.
struct OpDescriptor {
  std::string signature;  ///< op_signature, the op's key across files
  std::string op_type;    ///< ONNX operator type, e.g. "Conv"
  OpClass op_class = OpClass::kUnknown;
  DataType dtype = DataType::kOther;  ///< element type of the first output (op_signature's)
  std::vector<OpInput> inputs;        ///< in order
  Attributes attributes;
  bool whitelisted = false;          ///< in the whitelist it was described with
  bool known = false;                ///< false when the catalog's memory-bound fallback was used
  std::int64_t parameter_count = 0;  ///< elements of the parameter tensors the op reads
  PassCost inference;                ///< MACs, flops, bytes (lower bound), kernel launches
  PassCost training_forward;
  PassCost backward;

  bool operator==(const OpDescriptor&) const = default;
};

/// The description of `node` of `network`: signature, catalog cost (op_cost), inputs and
/// attributes; `whitelisted` from `whitelist`. Thread-safe.
OpDescriptor describe_op(const Network& network, const Node& node,
                         const Whitelist& whitelist = Whitelist::standard());

}  // namespace nnergy::graph
