// The exporter's energy counters: from the source's counter, else integrated power; never
// decreasing.
#include "nnergy/fleet/energy_total.h"

#include <gtest/gtest.h>

namespace nnergy::fleet {
namespace {

constexpr double kTolJ = 1e-9;

measure::PowerSample sample(double time_s, std::optional<double> power_w,
                            std::optional<double> energy_j) {
  measure::PowerSample s;
  s.time_s = time_s;
  s.power_w = power_w;
  s.energy_j = energy_j;
  return s;
}

TEST(PrometheusEnergyTotal, IntegratesPowerWithoutACounter) {
  // 250 W for 2 s is 500 J.
  EnergyTotal total;
  EXPECT_FALSE(total.joules().has_value());
  for (int i = 0; i <= 20; ++i) total.add(sample(0.1 * i, 250.0, std::nullopt));
  EXPECT_NEAR(total.joules().value(), 500.0, kTolJ);
}

TEST(PrometheusEnergyTotal, FollowsTheCounterAndNeverGoesBackwards) {
  EnergyTotal total;
  total.add(sample(0, 100, 1000.0));
  total.add(sample(1, 100, 1100.0));
  EXPECT_NEAR(total.joules().value(), 1100.0, kTolJ);
  // A driver reload restarts the counter at 5 J: the total stays, then counts on from there.
  total.add(sample(2, 100, 5.0));
  EXPECT_NEAR(total.joules().value(), 1100.0, kTolJ);
  total.add(sample(3, 100, 105.0));
  EXPECT_NEAR(total.joules().value(), 1200.0, kTolJ);
}

TEST(PrometheusEnergyTotal, SamplesWithNeitherReadingChangeNothing) {
  EnergyTotal total;
  total.add(sample(0, std::nullopt, std::nullopt));
  EXPECT_FALSE(total.joules().has_value());
}

}  // namespace
}  // namespace nnergy::fleet
