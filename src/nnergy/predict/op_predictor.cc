#include "nnergy/predict/op_predictor.h"

#include "nnergy/core/error.h"

namespace nnergy::predict {

std::string to_string(Mode mode) { return mode == Mode::kInference ? "inference" : "training"; }

graph::DataType storage_type(device::Precision precision) {
  switch (precision) {
    case device::Precision::kFp16:
      return graph::DataType::kFloat16;
    case device::Precision::kBf16:
      return graph::DataType::kBFloat16;
    case device::Precision::kFp64:
      return graph::DataType::kFloat64;
    case device::Precision::kFp32:
    case device::Precision::kTf32:
      return graph::DataType::kFloat32;
  }
  return graph::DataType::kFloat32;
}

Mode parse_mode(const std::string& name, const std::string& flag) {
  if (name == "inference") return Mode::kInference;
  if (name == "training") return Mode::kTraining;
  throw InvalidInput(flag + " " + name + ": unknown mode; accepted: inference, training");
}

}  // namespace nnergy::predict
