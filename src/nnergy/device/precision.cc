#include "nnergy/device/precision.h"

#include "nnergy/core/error.h"

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
  }
  return "fp32";
}

const std::vector<Precision>& all_precisions() {
  static const std::vector<Precision> kAll = {Precision::kFp32, Precision::kFp64, Precision::kTf32,
                                              Precision::kFp16, Precision::kBf16};
  return kAll;
}

Precision parse_precision(std::string_view name, std::string_view flag) {
  for (Precision p : all_precisions()) {
    if (to_string(p) == name) return p;
  }
  throw InvalidInput(std::string(flag) + " " + std::string(name) +
                     ": unknown precision; accepted: fp32, fp64, tf32, fp16, bf16");
}

}  // namespace nnergy::device
