#include "nnergy/llm/weight_format.h"

#include <fmt/format.h>

#include <optional>
#include <utility>

#include "nnergy/core/error.h"
#include "nnergy/core/nearest_name.h"
#include "nnergy/core/text.h"

namespace nnergy::llm {

namespace {

using device::Precision;

// The tensor-core precision a format computes in when the device has it.
std::optional<Precision> native_units(WeightFormat format) {
  switch (format) {
    case WeightFormat::kBf16:
      return Precision::kBf16;
    case WeightFormat::kFp16:
      return Precision::kFp16;
    case WeightFormat::kFp32:
      return Precision::kTf32;
    case WeightFormat::kFp8:
      return Precision::kFp8;
    case WeightFormat::kNvFp4:
    case WeightFormat::kMxFp4:
      return Precision::kFp4;
    case WeightFormat::kInt8:
      return Precision::kInt8;
    case WeightFormat::kInt4:
      return std::nullopt;  // weight-only by design
  }
  return std::nullopt;
}

// 16-bit math of a weight-only format: bf16 where the device has it.
std::optional<Precision> sixteen_bit(const device::DeviceSpec& d) {
  if (d.peak(Precision::kBf16)) return Precision::kBf16;
  if (d.peak(Precision::kFp16)) return Precision::kFp16;
  return std::nullopt;
}

}  // namespace

std::string_view to_string(WeightFormat format) {
  switch (format) {
    case WeightFormat::kBf16:
      return "bf16";
    case WeightFormat::kFp16:
      return "fp16";
    case WeightFormat::kFp32:
      return "fp32";
    case WeightFormat::kFp8:
      return "fp8";
    case WeightFormat::kNvFp4:
      return "nvfp4";
    case WeightFormat::kMxFp4:
      return "mxfp4";
    case WeightFormat::kInt8:
      return "int8";
    case WeightFormat::kInt4:
      return "int4";
  }
  return "bf16";
}

const std::vector<WeightFormat>& all_weight_formats() {
  static const std::vector<WeightFormat> kAll = {
      WeightFormat::kBf16,  WeightFormat::kFp16,  WeightFormat::kFp32, WeightFormat::kFp8,
      WeightFormat::kNvFp4, WeightFormat::kMxFp4, WeightFormat::kInt8, WeightFormat::kInt4};
  return kAll;
}

WeightFormat parse_weight_format(std::string_view name, std::string_view setting) {
  static const std::vector<std::pair<std::string, WeightFormat>> kNames = {
      {"bf16", WeightFormat::kBf16},         {"fp16", WeightFormat::kFp16},
      {"fp32", WeightFormat::kFp32},         {"fp8", WeightFormat::kFp8},
      {"nvfp4", WeightFormat::kNvFp4},       {"mxfp4", WeightFormat::kMxFp4},
      {"int8", WeightFormat::kInt8},         {"int4", WeightFormat::kInt4},
      {"bfloat16", WeightFormat::kBf16},     {"float16", WeightFormat::kFp16},
      {"half", WeightFormat::kFp16},         {"float32", WeightFormat::kFp32},
      {"e4m3", WeightFormat::kFp8},          {"fp8_e4m3", WeightFormat::kFp8},
      {"float8_e4m3fn", WeightFormat::kFp8}, {"fp4", WeightFormat::kNvFp4},
      {"w8a8", WeightFormat::kInt8},         {"awq", WeightFormat::kInt4},
      {"gptq", WeightFormat::kInt4},         {"w4a16", WeightFormat::kInt4}};
  const std::string key = ascii_lower(name);
  std::vector<std::string> spellings;
  for (const auto& [spelling, format] : kNames) {
    if (spelling == key) return format;
    spellings.push_back(spelling);
  }
  const std::string hint = did_you_mean(name, spellings);
  throw InvalidInput(fmt::format(
      "{}: expected a precision, bf16, fp16, fp32, fp8 (e4m3), nvfp4, mxfp4, int8 (W8A8) or int4 "
      "(AWQ/GPTQ weight-only), found '{}'{}",
      setting, name, hint.empty() ? "" : "; " + hint));
}

double bytes_per_weight(WeightFormat format) {
  switch (format) {
    case WeightFormat::kBf16:
    case WeightFormat::kFp16:
      return 2;
    case WeightFormat::kFp32:
      return 4;
    case WeightFormat::kFp8:
    case WeightFormat::kInt8:
      return 1;
    case WeightFormat::kNvFp4:
      return 0.5 + 1.0 / 16;
    case WeightFormat::kMxFp4:
      return 0.5 + 1.0 / 32;
    case WeightFormat::kInt4:
      return 0.5 + 4.0 / 128;
  }
  return 2;
}

kernel::GemmFormat gemm_format(const FormatMath& math) {
  using kernel::GemmFormat;
  switch (math.format) {
    case WeightFormat::kBf16:
    case WeightFormat::kFp16:
      return GemmFormat::k16Bit;
    case WeightFormat::kFp32:
      return GemmFormat::kFp32;
    case WeightFormat::kFp8:
      return math.weight_only ? GemmFormat::kInt8WeightOnly : GemmFormat::kFp8;
    case WeightFormat::kInt8:
      return math.weight_only ? GemmFormat::kInt8WeightOnly : GemmFormat::kInt8;
    case WeightFormat::kNvFp4:
      return math.weight_only ? GemmFormat::kInt4WeightOnly : GemmFormat::kNvfp4;
    case WeightFormat::kMxFp4:
    case WeightFormat::kInt4:
      return GemmFormat::kInt4WeightOnly;
  }
  return GemmFormat::k16Bit;
}

bool runs_on(WeightFormat format, const device::DeviceSpec& device) {
  const std::optional<Precision> units = native_units(format);
  if (units && device.peak(*units)) return true;
  if (format == WeightFormat::kBf16 || format == WeightFormat::kInt8) return false;
  if (format == WeightFormat::kFp16 || format == WeightFormat::kFp32) return false;
  return device.peak(Precision::kBf16).has_value();
}

FormatMath format_math(WeightFormat format, const device::DeviceSpec& device,
                       std::string_view setting, const std::vector<std::string>& capable_devices) {
  FormatMath m;
  m.format = format;
  const std::optional<Precision> units = native_units(format);
  if (units && device.peak(*units)) {
    m.math = *units;
    // W8A8 and NVFP4 (W4A4) quantize the activations a product reads; MXFP4 checkpoints
    // (gpt-oss) keep 16-bit activations.
    m.gemm_input_bytes = 2;
    if (format == WeightFormat::kFp8 || format == WeightFormat::kInt8) m.gemm_input_bytes = 1;
    if (format == WeightFormat::kNvFp4) m.gemm_input_bytes = bytes_per_weight(format);
    if (format == WeightFormat::kFp32) m.gemm_input_bytes = 4;
    return m;
  }
  if (runs_on(format, device)) {
    m.math = *sixteen_bit(device);
    m.weight_only = true;
    if (format != WeightFormat::kInt4) {
      m.note = fmt::format(
          "{} on the {}: no {} units; weights read as {} and computed in {} (weight-only, as "
          "serving engines run it there)",
          to_string(format), device.id, units ? device::to_string(*units) : "", to_string(format),
          device::to_string(m.math));
    }
    return m;
  }
  throw InvalidInput(fmt::format(
      "{}: the {} ({}) can neither compute {} nor run it weight-only (that needs bf16 units: "
      "Ampere or newer); GPUs of the catalog that can: {}",
      setting, device.id, device.name, to_string(format), join_with_commas(capable_devices)));
}

}  // namespace nnergy::llm
