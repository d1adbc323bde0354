#include "nnergy/graph/data_type.h"

#include <string>

#include "nnergy/core/error.h"

namespace nnergy::graph {

double bytes_per_element(DataType type) {
  switch (type) {
    case DataType::kFloat64:
    case DataType::kInt64:
      return 8;
    case DataType::kFloat16:
    case DataType::kBFloat16:
      return 2;
    case DataType::kInt8:
    case DataType::kUInt8:
    case DataType::kBool:
    case DataType::kFloat8:
      return 1;
    case DataType::kFloat4:
      return 0.5;
    case DataType::kFloat32:
    case DataType::kInt32:
    case DataType::kOther:
      return 4;
  }
  return 4;
}

std::string_view to_string(DataType type) {
  switch (type) {
    case DataType::kFloat32:
      return "fp32";
    case DataType::kFloat16:
      return "fp16";
    case DataType::kBFloat16:
      return "bf16";
    case DataType::kFloat64:
      return "fp64";
    case DataType::kFloat8:
      return "fp8";
    case DataType::kFloat4:
      return "fp4";
    case DataType::kInt64:
      return "int64";
    case DataType::kInt32:
      return "int32";
    case DataType::kInt8:
      return "int8";
    case DataType::kUInt8:
      return "uint8";
    case DataType::kBool:
      return "bool";
    case DataType::kOther:
      return "other";
  }
  return "other";
}

DataType parse_data_type(std::string_view name, std::string_view where) {
  for (const DataType type :
       {DataType::kFloat32, DataType::kFloat16, DataType::kBFloat16, DataType::kFloat64,
        DataType::kFloat8, DataType::kFloat4, DataType::kInt64, DataType::kInt32, DataType::kInt8,
        DataType::kUInt8, DataType::kBool, DataType::kOther}) {
    if (to_string(type) == name) return type;
  }
  throw InvalidInput(
      std::string(where) + ": unknown element type '" + std::string(name) +
      "'; accepted: fp32, fp16, bf16, fp64, fp8, fp4, int64, int32, int8, uint8, bool, other");
}

bool is_floating(DataType type) {
  return type == DataType::kFloat32 || type == DataType::kFloat16 || type == DataType::kBFloat16 ||
         type == DataType::kFloat64 || type == DataType::kFloat8 || type == DataType::kFloat4;
}

}  // namespace nnergy::graph
