#include "nnergy/network/power_limit.h"

#include "nnergy/core/error.h"

namespace nnergy::network {

PowerLimitedClock clock_under_power_limit(const CostedNetwork& network,
                                          const predict::OpPredictor& predictor,
                                          PredictionSettings settings,
                                          const std::vector<double>& clocks_mhz, double limit_w) {
  if (clocks_mhz.empty()) throw InvalidInput("power limit: no clocks to choose from");
  PowerLimitedClock result;
  result.limit_w = limit_w;
  result.boost_clock_mhz = clocks_mhz.back();
  // Average power rises with the clock (V²·f), so the first clock from the top that fits is
  // the highest one.
  for (auto it = clocks_mhz.rbegin(); it != clocks_mhz.rend(); ++it) {
    settings.point.clock_mhz = *it;
    const double power_w = predict_network(network, predictor, settings).totals.power_w;
    if (it == clocks_mhz.rbegin()) {
      result.unlimited_power_w = power_w;
      result.binding = power_w > limit_w;
    }
    result.clock_mhz = *it;
    if (power_w <= limit_w) return result;
  }
  result.met = false;
  return result;
}

}  // namespace nnergy::network
