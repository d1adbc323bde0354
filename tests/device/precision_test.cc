#include "nnergy/device/precision.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "nnergy/core/error.h"

namespace nnergy::device {
namespace {

TEST(Precision, ParsesCatalogNamesAndCommonSpellingsInAnyCase) {
  const std::pair<const char*, Precision> known[] = {
      {"fp32", Precision::kFp32},     {"Fp32", Precision::kFp32},     {"FP32", Precision::kFp32},
      {"float32", Precision::kFp32},  {"float", Precision::kFp32},    {"Float", Precision::kFp32},
      {"fp64", Precision::kFp64},     {"float64", Precision::kFp64},  {"double", Precision::kFp64},
      {"tf32", Precision::kTf32},     {"TF32", Precision::kTf32},     {"fp16", Precision::kFp16},
      {"FP16", Precision::kFp16},     {"float16", Precision::kFp16},  {"half", Precision::kFp16},
      {"Half", Precision::kFp16},     {"bf16", Precision::kBf16},     {"BF16", Precision::kBf16},
      {"bfloat16", Precision::kBf16}, {"BFloat16", Precision::kBf16},
  };
  for (const auto& [name, precision] : known) {
    EXPECT_EQ(parse_precision(name, "--precision"), precision) << name;
  }
  // Every precision's own name round-trips.
  for (Precision p : all_precisions()) EXPECT_EQ(parse_precision(to_string(p), "x"), p);
}

std::string precision_message(const std::string& name) {
  try {
    parse_precision(name, "--precision");
  } catch (const InvalidInput& e) {
    return e.what();
  }
  return "(no InvalidInput thrown)";
}

TEST(Precision, UnknownNameListsTheAcceptedNamesAndTheNearest) {
  const std::string accepted =
      "--precision: expected a precision, fp32, fp64, tf32, fp16, bf16, fp8, fp4 or int8 (any "
      "case; also float32, float, float64, double, float16, half, bfloat16, e4m3, float8), found ";
  EXPECT_EQ(precision_message("int4"),
            accepted + "'int4' (unknown precision); did you mean 'int8'?");
  EXPECT_EQ(precision_message("fp166"),
            accepted + "'fp166' (unknown precision); did you mean 'fp16'?");
  EXPECT_EQ(precision_message("doubel"),
            accepted + "'doubel' (unknown precision); did you mean 'double'?");
  EXPECT_EQ(precision_message("FP 16"),
            accepted + "'FP 16' (unknown precision); did you mean 'fp16'?");
}

TEST(Precision, StorageTypeIsTheElementTypeOfTheTensors) {
  EXPECT_EQ(storage_type(Precision::kBf16), graph::DataType::kBFloat16);
  EXPECT_EQ(storage_type(Precision::kFp16), graph::DataType::kFloat16);
  EXPECT_EQ(storage_type(Precision::kFp64), graph::DataType::kFloat64);
  EXPECT_EQ(storage_type(Precision::kTf32), graph::DataType::kFloat32);  // tf32 computes on fp32
  EXPECT_EQ(storage_type(Precision::kFp32), graph::DataType::kFloat32);
}

}  // namespace
}  // namespace nnergy::device
