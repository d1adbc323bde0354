#pragma once

// Which devices of the catalog are GPUs, shared by api/compare.cc and api/compare_serve.cc.
// Internal to nnergy::api.

#include "nnergy/device/device_spec.h"

namespace nnergy::api::detail {

/// True for NVIDIA and AMD GPUs (the catalog also holds CPU cores).
inline bool is_gpu(const device::DeviceSpec& d) {
  return d.vendor == "nvidia" || d.vendor == "amd";
}

}  // namespace nnergy::api::detail
