#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "nnergy/graph/node.h"
#include "nnergy/graph/op_descriptor.h"

namespace nnergy::dataset {

/// One unique operation as a dataset stores it (table `ops`): its row id and its description.
struct OpRecord {
  std::int64_t id = 0;  ///< row id in the file it was read from; 0 before it is stored
  graph::OpDescriptor op;

  bool operator==(const OpRecord&) const = default;
};

/// The JSON text column `input_shapes_json` stores for `inputs`, in order:
/// [{"role": "activation", "shape": [1, 4, 8, 8], "dtype": "fp32", "requires_grad": false}, ...].
std::string inputs_json(const std::vector<graph::OpInput>& inputs);
/// The JSON text column `attributes_json` stores for `attributes`, a JSON object by name:
/// {"group": 1, "pads": [0, 0, 0, 0]}.
std::string attributes_json(const graph::Attributes& attributes);

/// Parses what inputs_json writes. Throws InvalidInput naming `where` (the file, row and column)
/// for text that is not such an array: an entry without a role, a shape of non-negative integers,
/// an element type (graph::parse_data_type) or requires_grad.
std::vector<graph::OpInput> parse_inputs_json(std::string_view text, std::string_view where);
/// Parses what attributes_json writes: integers as int64 (true and false as 1 and 0), other
/// numbers as double, strings, and lists of numbers (all integers: int64, else double). Throws
/// InvalidInput naming `where` and the attribute for anything else (null, objects, nested lists,
/// lists of strings).
graph::Attributes parse_attributes_json(std::string_view text, std::string_view where);

}  // namespace nnergy::dataset
