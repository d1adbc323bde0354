#include "nnergy/measure/measurement_window.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <optional>
#include <vector>

#include "nnergy/core/error.h"

namespace nnergy::measure {
namespace {

// Expected values are exact by construction (times and energies chosen to be representable);
// the tolerance only absorbs floating-point rounding.
constexpr double kRounding = 1e-9;
const double kSqrt12 = std::sqrt(12.0);

constexpr std::uint64_t kGpuIdle = 0x1;
constexpr std::uint64_t kSwPowerCap = 0x4;
constexpr std::uint64_t kHwThermalSlowdown = 0x40;

SourceInfo gpu_info() {
  SourceInfo info;
  info.id = "test:0";
  info.kind = "gpu";
  return info;
}

PowerSample sample(double time_s, std::optional<double> power_w,
                   std::optional<double> energy_j = std::nullopt) {
  PowerSample s;
  s.time_s = time_s;
  s.power_w = power_w;
  s.energy_j = energy_j;
  return s;
}

WindowOptions no_filter() {
  WindowOptions options;
  options.sigma_filter = 0;
  return options;
}

// Readings every 0.1 s over [0, 2] s of a steady 250 W load, with an exact energy counter.
std::vector<PowerSample> steady_250_w(bool with_counter) {
  std::vector<PowerSample> samples;
  for (int k = 0; k <= 20; ++k) {
    const double t = k / 10.0;
    samples.push_back(sample(t, 250.0, with_counter ? std::optional(250.0 * t) : std::nullopt));
  }
  return samples;
}

TEST(AnalyzeWindow, SteadyTwoFiftyWattsForTwoSecondsIsFiveHundredJoules) {
  const SourceMeasurement m = analyze_window(gpu_info(), steady_250_w(true), 0.0, 2.0, {});
  EXPECT_EQ(m.info.id, "test:0");
  EXPECT_NEAR(m.time_s, 2.0, kRounding);
  EXPECT_EQ(m.samples_total, 21u);
  EXPECT_EQ(m.samples_used, 21u);
  EXPECT_EQ(m.dropped_sigma, 0u);
  ASSERT_TRUE(m.power_mean_w && m.power_sigma_w && m.power_peak_w);
  EXPECT_NEAR(*m.power_mean_w, 250.0, kRounding);
  EXPECT_NEAR(*m.power_sigma_w, 0.0, kRounding);
  EXPECT_NEAR(*m.power_peak_w, 250.0, kRounding);
  ASSERT_TRUE(m.energy_from_power_j && m.energy_from_power_sigma_j);
  EXPECT_NEAR(*m.energy_from_power_j, 500.0, kRounding);
  EXPECT_NEAR(*m.energy_from_power_sigma_j, 0.0, kRounding);
  ASSERT_TRUE(m.energy_from_counter_j && m.energy_j && m.energy_sigma_j);
  EXPECT_NEAR(*m.energy_from_counter_j, 500.0, kRounding);
  EXPECT_NEAR(*m.energy_j, 500.0, kRounding);
  // Both edges fall on samples: the counter is read there, not interpolated.
  EXPECT_NEAR(*m.energy_sigma_j, 0.0, kRounding);
  EXPECT_EQ(m.energy_method, "counter");
}

TEST(AnalyzeWindow, WithoutCounterTheEnergyComesFromMeanPower) {
  const SourceMeasurement m = analyze_window(gpu_info(), steady_250_w(false), 0.0, 2.0, {});
  EXPECT_FALSE(m.energy_from_counter_j);
  ASSERT_TRUE(m.energy_j);
  EXPECT_NEAR(*m.energy_j, 500.0, kRounding);
  EXPECT_EQ(m.energy_method, "power-mean");
}

TEST(AnalyzeWindow, SigmaFilterRemovesTheStartupTransient) {
  // The first reading is still on the way up from idle (seed 000 Fig. 4.3). Over the 21 readings
  // x̄ = 5050/21 ≈ 240.5 W and σ = √(840000/441) ≈ 43.6 W, so the 3σ channel is ±130.9 W: the
  // 50 W reading (190.5 W off) is outside it, every 250 W reading (9.5 W off) inside.
  std::vector<PowerSample> samples = steady_250_w(false);
  samples.front().power_w = 50.0;

  const SourceMeasurement filtered = analyze_window(gpu_info(), samples, 0.0, 2.0, {});
  EXPECT_EQ(filtered.samples_total, 21u);
  EXPECT_EQ(filtered.dropped_sigma, 1u);
  EXPECT_EQ(filtered.samples_used, 20u);
  ASSERT_TRUE(filtered.power_mean_w && filtered.energy_j);
  EXPECT_NEAR(*filtered.power_mean_w, 250.0, kRounding);
  EXPECT_NEAR(*filtered.energy_j, 500.0, kRounding);
  EXPECT_NEAR(*filtered.power_peak_w, 250.0, kRounding);

  const SourceMeasurement unfiltered = analyze_window(gpu_info(), samples, 0.0, 2.0, no_filter());
  EXPECT_EQ(unfiltered.dropped_sigma, 0u);
  EXPECT_EQ(unfiltered.samples_used, 21u);
  EXPECT_NEAR(*unfiltered.power_mean_w, 5050.0 / 21.0, kRounding);
  EXPECT_NEAR(*unfiltered.power_sigma_w, std::sqrt(840000.0 / 441.0), kRounding);
}

// Ten readings one second apart: 1410 MHz is the dominant clock (6 of 9 readings with a clock).
//   t  SM MHz  reasons              W    mem MHz  °C
//   0  1410    -                    100  5001     60
//   1  1410    -                    100  5001     61
//   2  1410    gpu_idle (no throttle) 100  5001   62
//   3  1410    -                    100  5001     63
//   4  1410    sw_power_cap         300  5001     64
//   5  1410    sw_power_cap         300  5001     65
//   6  1200    -                    500  5001     66
//   7  1200    -                    500  877      67
//   8  1200    hw_thermal_slowdown  500  5001     71.5
//   9  -       -                    100  5001     60
std::vector<PowerSample> clock_mix() {
  const std::vector<std::optional<double>> sm = {1410, 1410, 1410, 1410, 1410,
                                                 1410, 1200, 1200, 1200, std::nullopt};
  const std::vector<std::uint64_t> reasons = {0, 0, kGpuIdle,           0, kSwPowerCap, kSwPowerCap,
                                              0, 0, kHwThermalSlowdown, 0};
  const std::vector<double> watts = {100, 100, 100, 100, 300, 300, 500, 500, 500, 100};
  const std::vector<double> celsius = {60, 61, 62, 63, 64, 65, 66, 67, 71.5, 60};
  std::vector<PowerSample> samples;
  for (std::size_t k = 0; k < sm.size(); ++k) {
    PowerSample s = sample(static_cast<double>(k), watts[k]);
    s.sm_clock_mhz = sm[k];
    s.memory_clock_mhz = k == 7 ? 877.0 : 5001.0;
    s.throttle_reasons = reasons[k];
    s.temperature_c = celsius[k];
    samples.push_back(s);
  }
  return samples;
}

TEST(AnalyzeWindow, ClocksThrottlingAndTemperatureAreReported) {
  const SourceMeasurement m = analyze_window(gpu_info(), clock_mix(), 0.0, 9.0, no_filter());
  ASSERT_TRUE(m.dominant_sm_clock_mhz);
  EXPECT_EQ(*m.dominant_sm_clock_mhz, 1410.0);
  const std::map<double, std::size_t> sm_expected = {{1200.0, 3}, {1410.0, 6}};
  const std::map<double, std::size_t> memory_expected = {{877.0, 1}, {5001.0, 9}};
  EXPECT_EQ(m.sm_clocks_seen, sm_expected);
  EXPECT_EQ(m.memory_clocks_seen, memory_expected);
  EXPECT_EQ(m.throttle_reasons_seen, kGpuIdle | kSwPowerCap | kHwThermalSlowdown);
  EXPECT_EQ(m.throttled_samples, 3u);
  ASSERT_TRUE(m.temperature_max_c);
  EXPECT_EQ(*m.temperature_max_c, 71.5);
  // Nothing is excluded unless asked: (4·100 + 100 + 2·300 + 3·500)/10 = 260 W.
  EXPECT_EQ(m.samples_used, 10u);
  EXPECT_EQ(m.dropped_off_clock + m.dropped_throttled, 0u);
  EXPECT_NEAR(*m.power_mean_w, 260.0, kRounding);
  EXPECT_NEAR(*m.power_peak_w, 500.0, kRounding);
}

TEST(AnalyzeWindow, OffClockAndThrottledExclusionsAreCountedSeparately) {
  WindowOptions options = no_filter();
  options.exclude_off_clock = true;
  options.exclude_throttled = true;
  const SourceMeasurement m = analyze_window(gpu_info(), clock_mix(), 0.0, 9.0, options);
  // t = 6, 7, 8 are off-clock (8 is also throttled but counted once, as off-clock); t = 4, 5 are
  // throttled; gpu_idle is not throttling and t = 9 has no clock to judge, so both stay.
  EXPECT_EQ(m.dropped_off_clock, 3u);
  EXPECT_EQ(m.dropped_throttled, 2u);
  EXPECT_EQ(m.samples_used, 5u);
  EXPECT_EQ(m.samples_total, 10u);
  EXPECT_NEAR(*m.power_mean_w, 100.0, kRounding);
  // The peak and the clocks seen describe the whole window, excluded samples included.
  EXPECT_NEAR(*m.power_peak_w, 500.0, kRounding);
  EXPECT_EQ(m.throttled_samples, 3u);

  WindowOptions throttled_only = no_filter();
  throttled_only.exclude_throttled = true;
  const SourceMeasurement t = analyze_window(gpu_info(), clock_mix(), 0.0, 9.0, throttled_only);
  EXPECT_EQ(t.dropped_off_clock, 0u);
  EXPECT_EQ(t.dropped_throttled, 3u);
  EXPECT_EQ(t.samples_used, 7u);
}

TEST(AnalyzeWindow, DominantClockTieGoesToTheHigherClock) {
  std::vector<PowerSample> samples = {sample(0, 100), sample(1, 100)};
  samples[0].sm_clock_mhz = 1200;
  samples[1].sm_clock_mhz = 1410;
  const SourceMeasurement m = analyze_window(gpu_info(), samples, 0.0, 1.0, no_filter());
  ASSERT_TRUE(m.dominant_sm_clock_mhz);
  EXPECT_EQ(*m.dominant_sm_clock_mhz, 1410.0);
}

// A counter read once a second while the power steps 100 → 200 → 300 W: 0, 100, 300, 600 J.
std::vector<PowerSample> stepped_counter() {
  return {sample(0, std::nullopt, 0.0), sample(1, std::nullopt, 100.0),
          sample(2, std::nullopt, 300.0), sample(3, std::nullopt, 600.0)};
}

TEST(AnalyzeWindow, CounterIsInterpolatedAtNonAlignedEdges) {
  // E(0.5) = 0 + 0.5·100 = 50 J, E(2.25) = 300 + 0.25·300 = 375 J.
  const SourceMeasurement m = analyze_window(gpu_info(), stepped_counter(), 0.5, 2.25, {});
  ASSERT_TRUE(m.energy_from_counter_j && m.energy_j && m.energy_sigma_j);
  EXPECT_NEAR(*m.energy_from_counter_j, 325.0, kRounding);
  EXPECT_NEAR(*m.energy_j, 325.0, kRounding);
  EXPECT_EQ(m.energy_method, "counter");
  // Brackets of 100 J and 300 J, each uniform: σ = √(100² + 300²)/√12.
  EXPECT_NEAR(*m.energy_sigma_j, std::sqrt(100.0 * 100.0 + 300.0 * 300.0) / kSqrt12, kRounding);
  EXPECT_EQ(m.samples_total, 2u);
  EXPECT_FALSE(m.power_mean_w);
  EXPECT_FALSE(m.energy_from_power_j);
}

TEST(AnalyzeWindow, CounterWithoutBracketUsesTheNearestSampleInside) {
  // Window [−1, 2.5]: no reading before −1, so the begin uses the one at 0 s (0 J); the end is
  // interpolated to 450 J. The missing second is not counted: 450 J, an underestimate.
  const SourceMeasurement early = analyze_window(gpu_info(), stepped_counter(), -1.0, 2.5, {});
  ASSERT_TRUE(early.energy_j && early.energy_sigma_j);
  EXPECT_NEAR(*early.energy_j, 450.0, kRounding);
  // σ at the clamped begin: the mean counter power over the covered 2.5 s (180 W) times the 1 s
  // gap; at the end a 300 J bracket.
  EXPECT_NEAR(*early.energy_sigma_j, std::hypot(180.0, 300.0 / kSqrt12), kRounding);

  // Window [0.5, 4]: the end uses the reading at 3 s: 600 − 50 = 550 J over 2.5 s covered.
  const SourceMeasurement late = analyze_window(gpu_info(), stepped_counter(), 0.5, 4.0, {});
  ASSERT_TRUE(late.energy_j && late.energy_sigma_j);
  EXPECT_NEAR(*late.energy_j, 550.0, kRounding);
  EXPECT_NEAR(*late.energy_sigma_j, std::hypot(100.0 / kSqrt12, 220.0), kRounding);
}

TEST(AnalyzeWindow, CounterBracketsAWindowWithoutSamplesInside) {
  // Both edges between the readings at 1 s and 2 s (200 W): E(1.25) = 150, E(1.75) = 250.
  const SourceMeasurement m = analyze_window(gpu_info(), stepped_counter(), 1.25, 1.75, {});
  EXPECT_EQ(m.samples_total, 0u);
  ASSERT_TRUE(m.energy_j);
  EXPECT_NEAR(*m.energy_j, 100.0, kRounding);
}

TEST(AnalyzeWindow, CounterThatDoesNotCoverTheWindowIsAbsent) {
  // One reading only.
  EXPECT_FALSE(analyze_window(gpu_info(), {sample(1, std::nullopt, 100.0)}, 0.0, 2.0, {}).energy_j);
  // All readings before the window, or all after it.
  EXPECT_FALSE(analyze_window(gpu_info(), stepped_counter(), 3.5, 5.0, {}).energy_j);
  EXPECT_FALSE(analyze_window(gpu_info(), stepped_counter(), -2.0, -1.0, {}).energy_j);
  // A counter that went backwards (driver reload) gives no energy rather than a negative one.
  const std::vector<PowerSample> reset = {sample(0, std::nullopt, 500.0),
                                          sample(1, std::nullopt, 10.0)};
  EXPECT_FALSE(analyze_window(gpu_info(), reset, 0.0, 1.0, {}).energy_j);
}

TEST(AnalyzeWindow, PerIterationValues) {
  // Readings at 0.1 … 2.0 s alternating 240 and 260 W: x̄ = 250 W, Σ (xᵢ − x̄)² = 20·100, so
  // σ = √(2000/19) W, E = 500 J and σ_E = 2 s · σ.
  std::vector<PowerSample> samples;
  for (int k = 1; k <= 20; ++k) samples.push_back(sample(k / 10.0, k % 2 == 0 ? 240.0 : 260.0));
  WindowOptions options;
  options.iterations = 1000;
  const SourceMeasurement m = analyze_window(gpu_info(), samples, 0.0, 2.0, options);
  EXPECT_EQ(m.dropped_sigma, 0u);
  ASSERT_TRUE(m.energy_j && m.energy_sigma_j);
  EXPECT_NEAR(*m.energy_j, 500.0, kRounding);
  EXPECT_NEAR(*m.energy_sigma_j, 2.0 * std::sqrt(2000.0 / 19.0), kRounding);
  ASSERT_TRUE(m.time_per_iteration_s && m.energy_per_iteration_j && m.energy_per_iteration_sigma_j);
  EXPECT_NEAR(*m.time_per_iteration_s, 0.002, kRounding);                         // Eq. 4.6
  EXPECT_NEAR(*m.energy_per_iteration_j, 0.5, kRounding);                         // Eq. 4.7
  EXPECT_DOUBLE_EQ(*m.energy_per_iteration_sigma_j, *m.energy_sigma_j / 1000.0);  // Eq. 4.9
}

TEST(AnalyzeWindow, IterationsMustBePositive) {
  WindowOptions options;
  options.iterations = 0;
  EXPECT_THROW(analyze_window(gpu_info(), steady_250_w(true), 0.0, 2.0, options), InvalidInput);
  options.iterations = -5;
  EXPECT_THROW(analyze_window(gpu_info(), steady_250_w(true), 0.0, 2.0, options), InvalidInput);
}

TEST(AnalyzeWindow, NoSamplesGivesEmptyResults) {
  WindowOptions options;
  options.iterations = 10;
  const SourceMeasurement m = analyze_window(gpu_info(), {}, 1.0, 3.0, options);
  EXPECT_NEAR(m.time_s, 2.0, kRounding);
  EXPECT_EQ(m.samples_total, 0u);
  EXPECT_EQ(m.samples_used, 0u);
  EXPECT_FALSE(m.power_mean_w);
  EXPECT_FALSE(m.power_sigma_w);
  EXPECT_FALSE(m.power_peak_w);
  EXPECT_FALSE(m.energy_from_power_j);
  EXPECT_FALSE(m.energy_from_counter_j);
  EXPECT_FALSE(m.energy_j);
  EXPECT_FALSE(m.energy_sigma_j);
  EXPECT_EQ(m.energy_method, "");
  EXPECT_FALSE(m.dominant_sm_clock_mhz);
  EXPECT_FALSE(m.temperature_max_c);
  EXPECT_FALSE(m.energy_per_iteration_j);
  ASSERT_TRUE(m.time_per_iteration_s);
  EXPECT_NEAR(*m.time_per_iteration_s, 0.2, kRounding);
}

TEST(AnalyzeWindow, SingleReadingHasMeanButNoSigma) {
  const SourceMeasurement m = analyze_window(gpu_info(), {sample(1, 250.0)}, 0.0, 2.0, {});
  ASSERT_TRUE(m.power_mean_w && m.energy_j);
  EXPECT_NEAR(*m.energy_j, 500.0, kRounding);
  EXPECT_FALSE(m.power_sigma_w);
  EXPECT_FALSE(m.energy_sigma_j);
}

TEST(AnalyzeWindow, RejectsInvalidArguments) {
  EXPECT_THROW(analyze_window(gpu_info(), steady_250_w(true), 2.0, 1.0, {}), InvalidInput);
  EXPECT_THROW(analyze_window(gpu_info(), steady_250_w(true), 0.0, std::nan(""), {}), InvalidInput);
  WindowOptions negative;
  negative.sigma_filter = -3;
  EXPECT_THROW(analyze_window(gpu_info(), steady_250_w(true), 0.0, 2.0, negative), InvalidInput);
  const std::vector<PowerSample> unordered = {sample(1, 250.0), sample(0, 250.0)};
  EXPECT_THROW(analyze_window(gpu_info(), unordered, 0.0, 2.0, {}), InvalidInput);
}

}  // namespace
}  // namespace nnergy::measure
