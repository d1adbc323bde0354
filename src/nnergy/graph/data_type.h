#pragma once

#include <cstddef>
#include <string_view>

namespace nnergy::graph {

/// Element type of a tensor.
enum class DataType {
  kFloat32,
  kFloat16,
  kBFloat16,
  kFloat64,
  kFloat8,  ///< fp8 (e4m3), 1 byte
  kFloat4,  ///< fp4 (e2m1), half a byte
  kInt64,
  kInt32,
  kInt8,
  kUInt8,
  kBool,
  kOther
};

/// Size of one element in bytes (kOther counts as 4 bytes, the common case; fp4 is 0.5).
double bytes_per_element(DataType type);

/// Short name: "fp32", "fp16", "bf16", "fp64", "fp8", "fp4", "int64", "int32", "int8", "uint8",
/// "bool", "other".
std::string_view to_string(DataType type);

/// Parses the names to_string gives; throws InvalidInput naming `where` otherwise.
DataType parse_data_type(std::string_view name, std::string_view where);

/// True for the floating-point types.
bool is_floating(DataType type);

}  // namespace nnergy::graph
