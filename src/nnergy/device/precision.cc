#include "nnergy/device/precision.h"

#include <string>
#include <utility>

#include "nnergy/core/error.h"
#include "nnergy/core/nearest_name.h"
#include "nnergy/core/text.h"

namespace nnergy::device {

std::string_view to_string(Precision precision) {
  switch (precision) {
    case Precision::kFp32:
      return "fp32";
    case Precision::kFp64:
      return "fp64";
    case Precision::kTf32:
      return "tf32";
    case Precision::kFp16:
      return "fp16";
    case Precision::kBf16:
      return "bf16";
    case Precision::kFp8:
      return "fp8";
    case Precision::kFp4:
      return "fp4";
    case Precision::kInt8:
      return "int8";
  }
  return "fp32";
}

const std::vector<Precision>& all_precisions() {
  static const std::vector<Precision> kAll = {Precision::kFp32, Precision::kFp64, Precision::kTf32,
                                              Precision::kFp16, Precision::kBf16, Precision::kFp8,
                                              Precision::kFp4,  Precision::kInt8};
  return kAll;
}

Precision parse_precision(std::string_view name, std::string_view flag) {
  // Every accepted spelling, lower case, and its precision; the catalog names first.
  static const std::vector<std::pair<std::string, Precision>> kNames = {
      {"fp32", Precision::kFp32},    {"fp64", Precision::kFp64},    {"tf32", Precision::kTf32},
      {"fp16", Precision::kFp16},    {"bf16", Precision::kBf16},    {"float32", Precision::kFp32},
      {"float", Precision::kFp32},   {"float64", Precision::kFp64}, {"double", Precision::kFp64},
      {"float16", Precision::kFp16}, {"half", Precision::kFp16},    {"bfloat16", Precision::kBf16},
      {"fp8", Precision::kFp8},      {"e4m3", Precision::kFp8},     {"float8", Precision::kFp8},
      {"fp4", Precision::kFp4},      {"int8", Precision::kInt8}};
  const std::string key = ascii_lower(name);
  std::vector<std::string> spellings;
  for (const auto& [spelling, precision] : kNames) {
    if (spelling == key) return precision;
    spellings.push_back(spelling);
  }
  const std::string hint = did_you_mean(name, spellings);
  throw InvalidInput(std::string(flag) +
                     ": expected a precision, fp32, fp64, tf32, fp16, bf16, fp8, fp4 or int8 (any "
                     "case; also float32, float, float64, double, float16, half, bfloat16, e4m3, "
                     "float8), found '" +
                     std::string(name) + "' (unknown precision)" +
                     (hint.empty() ? "" : "; " + hint));
}

std::vector<Precision> parse_precision_list(std::string_view text, std::string_view flag) {
  std::vector<Precision> out;
  if (text.empty()) return out;
  for (const std::string& name : split_trimmed(text, ','))
    out.push_back(parse_precision(name, flag));
  return out;
}

graph::DataType storage_type(Precision precision) {
  switch (precision) {
    case Precision::kFp16:
      return graph::DataType::kFloat16;
    case Precision::kBf16:
      return graph::DataType::kBFloat16;
    case Precision::kFp64:
      return graph::DataType::kFloat64;
    case Precision::kFp32:
    case Precision::kTf32:
      return graph::DataType::kFloat32;
    case Precision::kFp8:
      return graph::DataType::kFloat8;
    case Precision::kFp4:
      return graph::DataType::kFloat4;
    case Precision::kInt8:
      return graph::DataType::kInt8;
  }
  return graph::DataType::kFloat32;
}

std::optional<Precision> precision_of_storage(graph::DataType type) {
  switch (type) {
    case graph::DataType::kFloat16:
      return Precision::kFp16;
    case graph::DataType::kBFloat16:
      return Precision::kBf16;
    case graph::DataType::kFloat64:
      return Precision::kFp64;
    case graph::DataType::kFloat32:
      return Precision::kFp32;
    case graph::DataType::kFloat8:
      return Precision::kFp8;
    default:
      return std::nullopt;
  }
}

}  // namespace nnergy::device
