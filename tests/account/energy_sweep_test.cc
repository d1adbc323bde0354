// Known answers for the alignment sweep (seed 001 §3.2–3.3): recency, multiplicity, durable and
// nested events, unmeasured time, conservation.
#include "nnergy/account/energy_sweep.h"

#include <gtest/gtest.h>

#include <random>

#include "account_test_support.h"
#include "nnergy/core/error.h"

namespace nnergy::account {
namespace {

using testing::cpu_event;
using testing::timeline;

// Sums of a handful of doubles: a few ulps of 1e3 J.
constexpr double kEnergyTolerance_j = 1e-9;
constexpr double kTimeTolerance_s = 1e-12;

TEST(EnergySweep, ConstantPowerOverOneEventIsPowerTimesDuration) {
  // 250 W for 2 s is 500 J.
  const std::vector<TraceEvent> events = {cpu_event("op", 1, 0.0, 2.0)};
  const auto power = {timeline("cpu", {{0, 250}, {1, 250}, {3, 250}})};
  const Accounting a = account_energy(events, power, {});
  EXPECT_NEAR(a.events[0].energy_j, 500.0, kEnergyTolerance_j);
  EXPECT_NEAR(a.events[0].exclusive_time_s, 2.0, kTimeTolerance_s);
  EXPECT_EQ(a.events[0].unmeasured_time_s, 0.0);
  ASSERT_EQ(a.devices.size(), 1u);
  EXPECT_NEAR(a.devices[0].measured_energy_j, 500.0, kEnergyTolerance_j);
  EXPECT_NEAR(a.devices[0].idle_energy_j, 0.0, kEnergyTolerance_j);
}

TEST(EnergySweep, ConcurrentEventsOnTwoThreadsShareEqually) {
  // A [0,2) and B [1,3) at 100 W: [0,1) A alone 100 J, [1,2) 50 J each, [2,3) B alone 100 J.
  const std::vector<TraceEvent> events = {cpu_event("A", 1, 0, 2), cpu_event("B", 2, 1, 2)};
  const Accounting a = account_energy(events, {timeline("cpu", {{0, 100}, {4, 100}})}, {});
  EXPECT_NEAR(a.events[0].energy_j, 150.0, kEnergyTolerance_j);
  EXPECT_NEAR(a.events[1].energy_j, 150.0, kEnergyTolerance_j);
  EXPECT_NEAR(a.devices[0].measured_energy_j, 300.0, kEnergyTolerance_j);
}

TEST(EnergySweep, NestedEventGivesItsParentOnlyTheRest) {
  // parent [0,4), child [1,2) on one thread: parent keeps 3 s, child 1 s.
  const std::vector<TraceEvent> events = {cpu_event("parent", 1, 0, 4),
                                          cpu_event("child", 1, 1, 1)};
  const Accounting a = account_energy(events, {timeline("cpu", {{0, 100}, {5, 100}})}, {});
  EXPECT_NEAR(a.events[0].energy_j, 300.0, kEnergyTolerance_j);
  EXPECT_NEAR(a.events[1].energy_j, 100.0, kEnergyTolerance_j);
  EXPECT_NEAR(a.events[0].exclusive_time_s, 3.0, kTimeTolerance_s);
}

TEST(EnergySweep, IdenticalSpansNestInInputOrder) {
  const std::vector<TraceEvent> events = {cpu_event("outer", 1, 0, 1), cpu_event("inner", 1, 0, 1)};
  const Accounting a = account_energy(events, {timeline("cpu", {{0, 10}, {2, 10}})}, {});
  EXPECT_NEAR(a.events[0].energy_j, 0.0, kEnergyTolerance_j);
  EXPECT_NEAR(a.events[1].energy_j, 10.0, kEnergyTolerance_j);
}

TEST(EnergySweep, RecencyTakesTheLastSampleAndInterpolationTheLine) {
  // Samples 100 W at 0 s and 300 W at 2 s; an event over [0,2): recency 100 W × 2 s = 200 J,
  // interpolation (100 + 300) / 2 × 2 s = 400 J.
  const std::vector<TraceEvent> events = {cpu_event("op", 1, 0, 2)};
  const auto power = {timeline("cpu", {{0, 100}, {2, 300}})};
  EXPECT_NEAR(account_energy(events, power, {false}).events[0].energy_j, 200.0, kEnergyTolerance_j);
  EXPECT_NEAR(account_energy(events, power, {true}).events[0].energy_j, 400.0, kEnergyTolerance_j);
}

TEST(EnergySweep, PowerStepSplitsBetweenEventsBeforeAndAfter) {
  const std::vector<TraceEvent> events = {cpu_event("A", 1, 0, 1), cpu_event("B", 1, 1, 1)};
  const Accounting a =
      account_energy(events, {timeline("cpu", {{0, 100}, {1, 300}, {2, 300}})}, {});
  EXPECT_NEAR(a.events[0].energy_j, 100.0, kEnergyTolerance_j);
  EXPECT_NEAR(a.events[1].energy_j, 300.0, kEnergyTolerance_j);
}

TEST(EnergySweep, GapsBetweenEventsAreIdleEnergy) {
  const std::vector<TraceEvent> events = {cpu_event("A", 1, 0, 1), cpu_event("B", 1, 3, 1)};
  const Accounting a = account_energy(events, {timeline("cpu", {{0, 50}, {5, 50}})}, {});
  EXPECT_NEAR(a.devices[0].idle_energy_j, 100.0, kEnergyTolerance_j);
  EXPECT_NEAR(a.devices[0].idle_time_s, 2.0, kTimeTolerance_s);
  EXPECT_NEAR(a.devices[0].attributed_energy_j, 100.0, kEnergyTolerance_j);
}

TEST(EnergySweep, EventTimeOutsideThePowerTraceIsUnmeasured) {
  // Power known on [0, 2]; the event runs [-1, 1): 1 s unmeasured, 1 s at 100 W.
  const std::vector<TraceEvent> events = {cpu_event("op", 1, -1, 2), cpu_event("late", 1, 3, 1)};
  const Accounting a = account_energy(events, {timeline("cpu", {{0, 100}, {2, 100}})}, {});
  EXPECT_NEAR(a.events[0].energy_j, 100.0, kEnergyTolerance_j);
  EXPECT_NEAR(a.events[0].unmeasured_time_s, 1.0, kTimeTolerance_s);
  EXPECT_NEAR(a.events[1].energy_j, 0.0, kEnergyTolerance_j);
  EXPECT_NEAR(a.events[1].unmeasured_time_s, 1.0, kTimeTolerance_s);
  EXPECT_NEAR(a.devices[0].unmeasured_busy_time_s, 2.0, kTimeTolerance_s);
}

TEST(EnergySweep, DeviceWithoutPowerIsReportedNotGuessed) {
  TraceEvent kernel = cpu_event("kernel", 7, 0, 1);
  kernel.device = "gpu:0";
  const Accounting a = account_energy({kernel}, {timeline("cpu", {{0, 100}, {2, 100}})}, {});
  ASSERT_EQ(a.devices.size(), 1u);
  EXPECT_FALSE(a.devices[0].has_power);
  EXPECT_EQ(a.events[0].energy_j, 0.0);
  EXPECT_NEAR(a.events[0].unmeasured_time_s, 1.0, kTimeTolerance_s);
}

TEST(EnergySweep, AttributedPlusIdleEqualsTheIntegralOfPowerOverTheWindow) {
  std::mt19937_64 random(7);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  std::vector<TraceEvent> events;
  for (std::uint64_t thread = 0; thread < 3; ++thread) {
    double t = uniform(random);
    for (int k = 0; k < 200; ++k) {
      const double duration = 0.01 + 0.05 * uniform(random);
      events.push_back(cpu_event("outer", thread, t, duration));
      events.push_back(cpu_event("inner", thread, t + 0.25 * duration, 0.5 * duration));
      t += duration + 0.02 * uniform(random);
    }
  }
  std::vector<std::pair<double, double>> points;
  for (double t = 0; t < 20; t += 0.004) points.emplace_back(t, 50 + 100 * uniform(random));
  const PowerTimeline power = timeline("cpu", points);
  for (const bool interpolate : {false, true}) {
    const Accounting a = account_energy(events, {power}, {interpolate});
    double sum_j = 0;
    for (const EventEnergy& e : a.events) sum_j += e.energy_j;
    const DeviceAccount& d = a.devices[0];
    // Independent integral of the timeline over [window_start, window_end] by fine stepping.
    double integral_j = 0;
    for (std::size_t i = 0; i + 1 < power.time_s.size(); ++i) {
      const double lo = std::max(power.time_s[i], d.window_start_s);
      const double hi = std::min(power.time_s[i + 1], d.window_end_s);
      if (hi <= lo) continue;
      const double slope = interpolate ? (power.power_w[i + 1] - power.power_w[i]) /
                                             (power.time_s[i + 1] - power.time_s[i])
                                       : 0.0;
      const double p_lo = power.power_w[i] + slope * (lo - power.time_s[i]);
      const double p_hi = power.power_w[i] + slope * (hi - power.time_s[i]);
      integral_j += 0.5 * (p_lo + p_hi) * (hi - lo);
    }
    constexpr double kSumTolerance_j = 1e-6;
    EXPECT_NEAR(sum_j, d.attributed_energy_j, kSumTolerance_j);
    EXPECT_NEAR(d.attributed_energy_j + d.idle_energy_j, integral_j, kSumTolerance_j);
    EXPECT_GT(d.idle_energy_j, 0.0);
  }
}

TEST(EnergySweep, DecimateKeepsEveryKthSampleAndTheLast) {
  const PowerTimeline t = timeline("cpu", {{0, 1}, {1, 2}, {2, 3}, {3, 4}, {4, 5}, {5, 6}});
  const PowerTimeline d = decimate(t, 2);
  EXPECT_EQ(d.time_s, (std::vector<double>{0, 2, 4, 5}));
  EXPECT_EQ(d.power_w, (std::vector<double>{1, 3, 5, 6}));
  EXPECT_THROW(decimate(t, 0), InvalidInput);
}

TEST(EnergySweep, CombinedTracesSumWhereBothAreKnown) {
  measure::PowerTrace a;
  a.info.id = "rapl:package-0";
  measure::PowerTrace b;
  b.info.id = "rapl:package-1";
  for (int k = 0; k <= 4; ++k) {
    measure::PowerSample s;
    s.epoch_s = 1000.0 + k;
    s.power_w = 10.0 * k;
    a.samples.push_back(s);
    s.epoch_s = 1000.5 + k;
    s.power_w = 1.0;
    b.samples.push_back(s);
  }
  const PowerTimeline t = combine_power_traces("cpu", {&a, &b}, 1000.0, false);
  // Known on [0.5, 4]: at 0.5 a is 0 (recency) + b 1; at 1: a 10 + b 1.
  ASSERT_FALSE(t.time_s.empty());
  EXPECT_DOUBLE_EQ(t.time_s.front(), 0.5);
  EXPECT_DOUBLE_EQ(t.power_w.front(), 1.0);
  EXPECT_DOUBLE_EQ(t.time_s[1], 1.0);
  EXPECT_DOUBLE_EQ(t.power_w[1], 11.0);
  EXPECT_DOUBLE_EQ(t.time_s.back(), 4.0);

  measure::PowerTrace empty;
  empty.info.id = "nvml:0";
  EXPECT_THROW(combine_power_traces("gpu:0", {&empty}, 0, false), InvalidInput);
}

}  // namespace
}  // namespace nnergy::account
