#pragma once

// The precision a prediction runs at, shared by api/predict.cc and api/compare.cc: the one the
// request names, else the one the file stores its tensors in. Internal to nnergy::api.

#include <optional>
#include <string>

#include "nnergy/core/setting_name.h"
#include "nnergy/device/precision.h"
#include "nnergy/graph/network.h"

namespace nnergy::api::detail {

/// A run's precision and, when the user should know how it was chosen, one line saying so.
struct RunPrecision {
  device::Precision precision = device::Precision::kFp32;
  std::string note;  ///< empty when the file is fp32 and nothing was asked, or both agree
};

/// `requested` when given (with a note when the file stores another type: the request is
/// honoured, the tensors are taken at the requested type), else the precision of the type the
/// file stores its parameters in (Network::stored_floating_type: fp16, bf16, fp64 or fp32),
/// fp32 when the file has no floating tensors. `names` spells the setting in the note.
RunPrecision run_precision(const std::optional<device::Precision>& requested,
                           const graph::Network& network, SettingNames names);

}  // namespace nnergy::api::detail
