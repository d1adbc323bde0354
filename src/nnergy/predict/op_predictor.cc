#include "nnergy/predict/op_predictor.h"

#include <algorithm>
#include <cctype>

#include "nnergy/core/error.h"
#include "nnergy/core/nearest_name.h"

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
  std::string key = name;
  std::transform(key.begin(), key.end(), key.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (key == "inference" || key == "infer") return Mode::kInference;
  if (key == "training" || key == "train") return Mode::kTraining;
  const std::string hint = did_you_mean(name, {"inference", "training", "infer", "train"});
  throw InvalidInput(flag +
                     ": expected a mode, inference or training (any case; also infer, train), "
                     "found '" +
                     name + "'" + (hint.empty() ? "" : "; " + hint));
}

}  // namespace nnergy::predict
