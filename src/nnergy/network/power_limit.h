#pragma once

// Predicting a network under a lowered board power limit (`nvidia-smi -pl`, Zeus): the GPU's
// power management lowers the core clock until the average power stays within the limit.

#include <vector>

#include "nnergy/network/network_prediction.h"

namespace nnergy::network {

/// The core clock a power limit leaves a network, as the model finds it.
struct PowerLimitedClock {
  double limit_w = 0;            ///< the power limit, W
  double clock_mhz = 0;          ///< the clock the network runs at under the limit, MHz
  double boost_clock_mhz = 0;    ///< the clock without the limit, MHz
  double unlimited_power_w = 0;  ///< predicted average power at the boost clock, W
  bool binding = false;          ///< true: the boost clock would draw more than the limit
  bool met = true;  ///< false: even the lowest clock draws more (clock_mhz is the lowest)
};

/// The highest of `clocks_mhz` (increasing, boost last) at which the network's predicted
/// average power is at most `limit_w`; the lowest clock when none is. The power management
/// of NVIDIA GPUs averages power over windows of tens of milliseconds or more, so the limit
/// applies to the iteration's average, not to each op. Throws InvalidInput for an empty clock
/// list.
PowerLimitedClock clock_under_power_limit(const CostedNetwork& network,
                                          const predict::OpPredictor& predictor,
                                          PredictionSettings settings,
                                          const std::vector<double>& clocks_mhz, double limit_w);

}  // namespace nnergy::network
