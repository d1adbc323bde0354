#include "nnergy/kernel/kernel_parameters.h"

#include <gtest/gtest.h>

#include "nnergy/core/error.h"

namespace nnergy::kernel {
namespace {

TEST(KernelParameters, RoundTripsThroughItsJson) {
  KernelParameters k;
  GemmParameters p;
  p.compute_efficiency = 0.81;
  p.latency_s = 3.5e-6;
  p.measurements = 12;
  p.fitted_on = "test rows";
  k.gemm["vllm"]["fp8"] = p;
  k.power.compute = 0.9;
  k.power.format_weight["nvfp4"] = 1.2;
  k.time_log_sigma["fp8"] = 0.1;
  k.power_log_sigma = 0.05;
  k.provenance = "test";
  const KernelParameters back = KernelParameters::parse(k.to_json_text(), "test.json");
  EXPECT_DOUBLE_EQ(back.gemm.at("vllm").at("fp8").compute_efficiency, 0.81);
  EXPECT_DOUBLE_EQ(back.gemm.at("vllm").at("fp8").latency_s, 3.5e-6);
  EXPECT_EQ(back.gemm.at("vllm").at("fp8").measurements, 12);
  EXPECT_DOUBLE_EQ(back.power.compute, 0.9);
  EXPECT_DOUBLE_EQ(back.power_weight(GemmFormat::kNvfp4), 1.2);
  EXPECT_DOUBLE_EQ(back.power_weight(GemmFormat::k16Bit), 1.0);
  EXPECT_DOUBLE_EQ(back.time_log_sigma.at("fp8"), 0.1);
  EXPECT_EQ(back.provenance, "test");
}

TEST(KernelParameters, RoundTripsTheMoeParametersApartFromTheGemms) {
  KernelParameters k;
  GemmParameters moe;
  moe.compute_efficiency = 0.42;
  k.moe["vllm"]["bf16"] = moe;
  k.accuracy.moe = "MoE layer time ...";
  const KernelParameters back = KernelParameters::parse(k.to_json_text(), "test.json");
  EXPECT_DOUBLE_EQ(back.moe_for(GemmFormat::k16Bit, "vllm").compute_efficiency, 0.42);
  EXPECT_TRUE(back.gemm.empty());
  EXPECT_EQ(back.accuracy.moe, "MoE layer time ...");
  std::string from;
  EXPECT_DOUBLE_EQ(back.moe_for(GemmFormat::kFp8, "tensorrt-llm", &from).compute_efficiency, 0.42);
  EXPECT_NE(from.find("vllm bf16 MoE kernels"), std::string::npos) << from;
}

TEST(KernelParameters, AFormatOnlyOneEngineWasMeasuredInIsTakenFromIt) {
  // fp32 GEMMs are measured under PyTorch only; an engine's request for them takes those.
  KernelParameters k;
  GemmParameters fp32;
  fp32.compute_efficiency = 0.7;
  k.gemm["pytorch"]["fp32"] = fp32;
  k.gemm["tensorrt-llm"]["bf16"] = GemmParameters{};
  std::string from;
  EXPECT_DOUBLE_EQ(k.gemm_for(GemmFormat::kFp32, "tensorrt-llm", &from).compute_efficiency, 0.7);
  EXPECT_NE(from.find("pytorch fp32 kernels"), std::string::npos) << from;
}

TEST(KernelParameters, AFormatWithoutAFitTakesItsNeighboursAndSaysSo) {
  KernelParameters k;
  GemmParameters fp8;
  fp8.compute_efficiency = 0.6;
  k.gemm["tensorrt-llm"]["fp8"] = fp8;
  std::string from;
  EXPECT_DOUBLE_EQ(k.gemm_for(GemmFormat::kNvfp4, "vllm", &from).compute_efficiency, 0.6);
  EXPECT_NE(from.find("tensorrt-llm fp8 kernels"), std::string::npos) << from;
  from.clear();
  EXPECT_DOUBLE_EQ(k.gemm_for(GemmFormat::kFp8, "tensorrt-llm", &from).compute_efficiency, 0.6);
  EXPECT_TRUE(from.empty()) << from;
  k.gemm.clear();
  k.gemm_for(GemmFormat::k16Bit, "vllm", &from);
  EXPECT_NE(from.find("defaults"), std::string::npos) << from;
}

TEST(KernelParameters, RefusesADocumentItCannotUseNamingTheField) {
  EXPECT_THROW(KernelParameters::parse("[1]", "k.json"), InvalidInput);
  EXPECT_THROW(KernelParameters::parse("{", "k.json"), InvalidInput);
  try {
    KernelParameters::parse(R"({"gemm": {"vllm": {"fp9": {}}}})", "k.json");
    FAIL() << "expected InvalidInput";
  } catch (const InvalidInput& e) {
    EXPECT_NE(std::string(e.what()).find("k.json: gemm.vllm.fp9"), std::string::npos) << e.what();
  }
  try {
    KernelParameters::parse(R"({"gemm": {"vllm": {"fp8": {"compute_efficiency": 3}}}})", "k.json");
    FAIL() << "expected InvalidInput";
  } catch (const InvalidInput& e) {
    EXPECT_NE(std::string(e.what()).find("compute_efficiency"), std::string::npos) << e.what();
  }
}

TEST(GemmFormat, ParsesTheNamesUsersWrite) {
  EXPECT_EQ(parse_gemm_format("BF16"), GemmFormat::k16Bit);
  EXPECT_EQ(parse_gemm_format("fp16"), GemmFormat::k16Bit);
  EXPECT_EQ(parse_gemm_format("fp4"), GemmFormat::kNvfp4);
  EXPECT_EQ(parse_gemm_format("awq"), GemmFormat::kInt4WeightOnly);
  EXPECT_EQ(parse_gemm_format("fp8_block"), GemmFormat::kFp8Block);
  EXPECT_FALSE(parse_gemm_format("fp9"));
}

}  // namespace
}  // namespace nnergy::kernel
