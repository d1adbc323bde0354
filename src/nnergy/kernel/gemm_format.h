#pragma once

// How a GEMM library multiplies: the units it runs on and the bytes it reads per element of
// weights and inputs. The formats are those the measured kernel tables distinguish (16-bit,
// fp8 with one scale per tensor, fp8 with block scales, NVFP4, int8/int4 weight-only, fp32 and
// tf32), because their kernels differ beyond the peak they run at.

#include <optional>
#include <string>
#include <string_view>

#include "nnergy/device/precision.h"

namespace nnergy::kernel {

enum class GemmFormat {
  kFp32,            ///< fp32 on the vector units (CUDA cores)
  kTf32,            ///< tf32 on the tensor cores, fp32 storage
  k16Bit,           ///< bf16 or fp16 weights and inputs
  kFp8,             ///< fp8 e4m3 weights and inputs, one scale per tensor (W8A8)
  kFp8Block,        ///< fp8 with 1×128 input and 128×128 weight block scales (DeepSeek-V3's)
  kNvfp4,           ///< NVFP4 weights and inputs (4-bit, one fp8 scale per 16 elements)
  kInt8,            ///< int8 weights and inputs (SmoothQuant W8A8)
  kInt8WeightOnly,  ///< int8 weights, 16-bit inputs and math (W8A16)
  kInt4WeightOnly,  ///< int4 weights (AWQ/GPTQ, also MXFP4 weight-only), 16-bit math (W4A16)
};

/// What a format runs at and reads.
struct GemmFormatInfo {
  std::string_view name;   ///< "bf16", "fp8", "fp8_block", "nvfp4", "int8", "int8_wo", ...
  device::Precision math;  ///< the units whose peak it runs at
  double weight_bytes;     ///< bytes per weight element (scales included)
  double input_bytes;      ///< bytes per input element the product reads
  double output_bytes;     ///< bytes per output element it writes
  /// Whether the engine quantizes the 16-bit input in a kernel of its own first (its time is
  /// part of the GEMM's, as measured: the tables time the whole Linear module).
  bool quantizes_input;
  std::string_view description;
};

const GemmFormatInfo& info(GemmFormat format);
/// The formats' names, comma-separated, for error messages.
std::string known_gemm_formats();
/// Parses a name of info() (any ASCII case; "fp16" and "bfloat16" are 16-bit, "w8a16" int8
/// weight-only, "w4a16", "awq", "gptq" int4 weight-only, "fp4" NVFP4); nullopt otherwise.
std::optional<GemmFormat> parse_gemm_format(std::string_view name);
/// All formats, in declaration order.
const GemmFormat* all_gemm_formats_begin();
const GemmFormat* all_gemm_formats_end();

}  // namespace nnergy::kernel
