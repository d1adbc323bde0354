#include "nnergy/kernel/gemm_format.h"

#include <algorithm>
#include <array>
#include <cctype>

namespace nnergy::kernel {

namespace {

using device::Precision;

// NVFP4: 4 bits per element plus one fp8 scale per 16 elements = 0.5625 bytes.
constexpr double kNvfp4Bytes = 0.5 + 1.0 / 16;

constexpr std::array<GemmFormat, 9> kAll = {
    GemmFormat::kFp32, GemmFormat::kTf32,           GemmFormat::k16Bit,
    GemmFormat::kFp8,  GemmFormat::kFp8Block,       GemmFormat::kNvfp4,
    GemmFormat::kInt8, GemmFormat::kInt8WeightOnly, GemmFormat::kInt4WeightOnly};

const std::array<GemmFormatInfo, 9> kInfo = {{
    {"fp32", Precision::kFp32, 4, 4, 4, false, "fp32 on the CUDA cores"},
    {"tf32", Precision::kTf32, 4, 4, 4, false, "tf32 tensor cores on fp32 storage"},
    {"bf16", Precision::kBf16, 2, 2, 2, false, "bf16/fp16 tensor cores"},
    {"fp8", Precision::kFp8, 1, 1, 2, true, "fp8 e4m3, per-tensor scales (W8A8)"},
    {"fp8_block", Precision::kFp8, 1 + 1.0 / (128 * 32), 1 + 1.0 / 32, 2, true,
     "fp8 e4m3 with 1x128 input and 128x128 weight block scales"},
    {"nvfp4", Precision::kFp4, kNvfp4Bytes, kNvfp4Bytes, 2, true,
     "NVFP4 weights and inputs (W4A4)"},
    {"int8", Precision::kInt8, 1, 1, 2, true, "int8 weights and inputs (W8A8)"},
    {"int8_wo", Precision::kBf16, 1, 2, 2, false, "int8 weight-only, 16-bit math (W8A16)"},
    {"int4_wo", Precision::kBf16, 0.5, 2, 2, false, "int4 weight-only, 16-bit math (W4A16)"},
}};

std::string lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

}  // namespace

const GemmFormatInfo& info(GemmFormat format) { return kInfo[static_cast<std::size_t>(format)]; }

const GemmFormat* all_gemm_formats_begin() { return kAll.data(); }
const GemmFormat* all_gemm_formats_end() { return kAll.data() + kAll.size(); }

std::string known_gemm_formats() {
  std::string out;
  for (const GemmFormat f : kAll) out += (out.empty() ? "" : ", ") + std::string(info(f).name);
  return out;
}

std::optional<GemmFormat> parse_gemm_format(std::string_view name) {
  const std::string n = lower(name);
  for (const GemmFormat f : kAll)
    if (n == info(f).name) return f;
  if (n == "fp16" || n == "bfloat16" || n == "float16" || n == "half") return GemmFormat::k16Bit;
  if (n == "float32" || n == "float") return GemmFormat::kFp32;
  if (n == "fp4") return GemmFormat::kNvfp4;
  if (n == "w8a8" || n == "int8_w8a8") return GemmFormat::kInt8;
  if (n == "w8a16") return GemmFormat::kInt8WeightOnly;
  if (n == "w4a16" || n == "awq" || n == "gptq") return GemmFormat::kInt4WeightOnly;
  if (n == "fp8_e4m3" || n == "e4m3") return GemmFormat::kFp8;
  return std::nullopt;
}

}  // namespace nnergy::kernel
