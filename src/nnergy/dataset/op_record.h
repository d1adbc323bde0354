#pragma once

#include <cstdint>
#include <string>

#include "nnergy/graph/network.h"
#include "nnergy/graph/op_cost.h"
#include "nnergy/graph/whitelist.h"

namespace nnergy::dataset {

/// One unique operation with the catalog features stored beside its measurements (table `ops`).
struct OpRecord {
  std::int64_t id = 0;    ///< row id in the file it was read from; 0 before it is stored
  std::string signature;  ///< graph::op_signature, the op's key across files
  std::string op_type;    ///< ONNX operator type, e.g. "Conv"
  std::string op_class;   ///< graph::to_string(OpClass), e.g. "matrix"
  std::string dtype;      ///< element type of the op's output, e.g. "fp32"
  /// Inputs in order, as JSON: [{"role": "activation", "shape": [1, 4, 8, 8],
  /// "dtype": "fp32", "requires_grad": false}, ...].
  std::string input_shapes_json;
  /// Attributes as a JSON object, e.g. {"group": 1, "pads": [0, 0, 0, 0]}.
  std::string attributes_json;
  bool whitelisted = false;          ///< in the whitelist used when the op was recorded
  bool known = false;                ///< false when the catalog's memory-bound fallback was used
  std::int64_t parameter_count = 0;  ///< elements of the parameter tensors the op reads
  graph::PassCost inference;         ///< MACs, flops, bytes (lower bound), kernel launches
  graph::PassCost training_forward;
  graph::PassCost backward;
};

/// The record of `node` of `network`: signature, catalog cost (graph::op_cost) and features;
/// `whitelisted` from `whitelist`. Thread-safe.
OpRecord op_record(const graph::Network& network, const graph::Node& node,
                   const graph::Whitelist& whitelist);

/// The same with graph::Whitelist::standard().
OpRecord op_record(const graph::Network& network, const graph::Node& node);

}  // namespace nnergy::dataset
