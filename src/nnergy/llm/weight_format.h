#pragma once

// How an LLM's weights (and KV cache) are stored and which units compute with them on a GPU:
// the formats serving engines run (bf16, fp16, fp8 e4m3, nvfp4, mxfp4, int8 W8A8, int4 AWQ/GPTQ)
// and their fallbacks where a GPU lacks the format's math (weight-only: the narrow weights are
// read as stored and dequantized into 16-bit math, as vLLM's Marlin kernels do).

#include <string>
#include <string_view>
#include <vector>

#include "nnergy/device/device_spec.h"
#include "nnergy/device/precision.h"
#include "nnergy/kernel/gemm_format.h"

namespace nnergy::llm {

enum class WeightFormat { kBf16, kFp16, kFp32, kFp8, kNvFp4, kMxFp4, kInt8, kInt4 };

/// "bf16", "fp16", "fp32", "fp8", "nvfp4", "mxfp4", "int8", "int4".
std::string_view to_string(WeightFormat format);
/// Parses the names above and common spellings ("bfloat16", "float16", "e4m3", "fp8_e4m3",
/// "w8a8", "awq", "gptq", "w4a16"), any case. Throws InvalidInput naming `setting` with the
/// accepted names otherwise.
WeightFormat parse_weight_format(std::string_view name, std::string_view setting);
/// All formats, in the order above.
const std::vector<WeightFormat>& all_weight_formats();

/// Bytes one weight takes in memory and is read as, block scales included: 2 for 16-bit, 1 for
/// fp8 and int8, 0.5625 for nvfp4 (one fp8 scale per 16), 0.53125 for mxfp4 (one 8-bit scale per
/// 32) and for int4 (a 16-bit scale and zero point per group of 128).
double bytes_per_weight(WeightFormat format);

/// The math a format runs on one device.
struct FormatMath {
  WeightFormat format = WeightFormat::kBf16;
  /// The units of the matrix products: the format's own (fp8, fp4, int8 tensor cores) or, for
  /// a weight-only format or a fallback, 16-bit (bf16, else fp16).
  device::Precision math = device::Precision::kBf16;
  bool weight_only = false;  ///< weights dequantized into 16-bit math
  /// Bytes per element of a matrix product's activation input: the activations quantized to
  /// the format where it runs natively (1 for fp8 and int8 W8A8, 0.5625 for nvfp4 W4A4, 4 for
  /// fp32), else 2 (weight-only and 16-bit: the activations stay in 16 bits). Only the matrix
  /// products' inputs: the activations between other kernels, the KV cache and the collectives
  /// keep formats of their own (llm::StepFormats).
  double gemm_input_bytes = 2;
  /// Set when the format does not run natively here: e.g. "fp8 on the a100-40gb: no fp8 units;
  /// weights read as fp8 and computed in bf16 (weight-only, as engines run it)".
  std::string note;
};

/// How `format` runs on `device`. Native where the device has the format's tensor peak (fp8:
/// Ada, Hopper, Blackwell, CDNA3+; fp4: Blackwell, CDNA4; int8: Turing and newer); weight-only
/// in 16-bit math where it does not but has bf16 units (Ampere and newer: the weight-only
/// kernels need them); int4 is always weight-only (AWQ/GPTQ). bf16 needs bf16 units. Throws
/// InvalidInput naming `setting` and saying which catalog GPUs can run it when the device can do
/// neither.
FormatMath format_math(WeightFormat format, const device::DeviceSpec& device,
                       std::string_view setting, const std::vector<std::string>& capable_devices);

/// The kernel model's GEMM format of `math` (kernel/gemm_format.h): 16-bit, fp32, and the
/// narrow formats native (fp8 per tensor, NVFP4, int8 W8A8) or weight-only (int8 for 8-bit
/// weights, int4 for 4-bit ones, MXFP4 included).
kernel::GemmFormat gemm_format(const FormatMath& math);

/// True when `format` runs on `device` natively or weight-only (format_math would not throw).
bool runs_on(WeightFormat format, const device::DeviceSpec& device);

}  // namespace nnergy::llm
