#pragma once

#include "nnergy/device/precision.h"

namespace nnergy::device {

/// Where on a device an operation runs: the precision of its arithmetic and the core clock.
struct OperatingPoint {
  Precision precision = Precision::kFp32;
  double clock_mhz = 0;  ///< core clock, MHz
};

}  // namespace nnergy::device
