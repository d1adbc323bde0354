#include "nnergy/predict/analytical_predictor.h"

#include <gtest/gtest.h>

#include "nnergy/core/error.h"

namespace nnergy::predict {
namespace {

using device::Precision;
using graph::OpClass;
using graph::PassCost;

// Round numbers so that every expected value can be worked out by hand.
device::DeviceSpec toy_device() {
  device::DeviceSpec d;
  d.id = "toy";
  d.peak_flop_per_s = {{Precision::kFp32, 10e12}, {Precision::kFp16, 40e12}};
  d.memory_bandwidth_byte_per_s = 1e12;
  d.tdp_w = 400;
  d.idle_w = 50;
  d.clock = {500, 1000, 1000, 100};
  d.dvfs = {0.5, 500};  // voltage 0.5·Vmax at 500 MHz, Vmax at 1000 MHz
  d.efficiency = {0.5, 1.0, 0.0};
  d.archline[Precision::kFp32] = {10e-12, 100e-12, 100, "toy", false, std::nullopt, std::nullopt};
  return d;
}

constexpr double kTolerance = 1e-12;  // relative, floating-point rounding only

TEST(AnalyticalPredictor, ComputeBoundPassAtBoost) {
  const AnalyticalPredictor p(toy_device());
  // 1 TFLOP at 0.5 · 10 TFLOP/s = 0.2 s; 1 GB at 1 TB/s = 1 ms: compute-bound.
  const OpEstimate e =
      p.predict_pass(PassCost{0, 1e12, 1e9, 0}, OpClass::kMatrix, {Precision::kFp32, 1000});
  EXPECT_NEAR(e.time_s, 0.2, 0.2 * kTolerance);
  // E = W·ε_flop + Q·ε_mem + T·π0 = 10 J + 0.1 J + 20 J (seed 003 Eq. 5).
  EXPECT_NEAR(e.energy_j, 30.1, 30.1 * kTolerance);
  EXPECT_NEAR(e.power_w, 150.5, 150.5 * kTolerance);
  EXPECT_TRUE(e.compute_bound);
  EXPECT_FALSE(e.power_capped);
}

TEST(AnalyticalPredictor, MemoryBoundPassAndLaunchOverhead) {
  device::DeviceSpec d = toy_device();
  d.efficiency.kernel_overhead_s = 5e-6;
  const AnalyticalPredictor p(d);
  const OpEstimate e =
      p.predict_pass(PassCost{0, 1e6, 1e9, 2}, OpClass::kElementwise, {Precision::kFp32, 1000});
  EXPECT_NEAR(e.time_s, 1e-3 + 10e-6, 1e-15);
  EXPECT_FALSE(e.compute_bound);
  EXPECT_NEAR(e.energy_j, 1e6 * 10e-12 + 1e9 * 100e-12 + (1e-3 + 10e-6) * 100, 1e-12);
}

TEST(AnalyticalPredictor, ClockScalesComputeTimeAndVoltageScalesEnergy) {
  const AnalyticalPredictor p(toy_device());
  const PassCost work{0, 1e12, 0, 0};
  const OpEstimate at_min = p.predict_pass(work, OpClass::kMatrix, {Precision::kFp32, 500});
  EXPECT_NEAR(at_min.time_s, 0.4, 0.4 * kTolerance);  // half the clock, twice the time
  // v = 0.5: ε_flop·v² = 2.5 pJ; baseline = idle 50 W + (100 − 50)·v²·(f/f_boost) = 56.25 W.
  EXPECT_NEAR(at_min.energy_j, 1e12 * 2.5e-12 + 0.4 * 56.25, 1e-9);
}

TEST(AnalyticalPredictor, MemoryTimeIgnoresCoreClockAboveHalfBoost) {
  const AnalyticalPredictor p(toy_device());
  const PassCost stream{0, 0, 1e9, 0};
  EXPECT_NEAR(p.predict_pass(stream, OpClass::kElementwise, {Precision::kFp32, 500}).time_s,
              p.predict_pass(stream, OpClass::kElementwise, {Precision::kFp32, 1000}).time_s,
              1e-15);
}

TEST(AnalyticalPredictor, MatrixOpsUseTensorPeakElementwiseUseVectorPeak) {
  const AnalyticalPredictor p(toy_device());
  const PassCost work{0, 1e12, 0, 0};
  EXPECT_NEAR(p.predict_pass(work, OpClass::kMatrix, {Precision::kFp16, 1000}).time_s, 0.05, 1e-12);
  EXPECT_NEAR(p.predict_pass(work, OpClass::kElementwise, {Precision::kFp16, 1000}).time_s, 0.2,
              1e-12);
}

TEST(AnalyticalPredictor, PowerAboveTdpStretchesTime) {
  device::DeviceSpec d = toy_device();
  d.archline[Precision::kFp32].eps_flop_j = 200e-12;  // 200 J for 1 TFLOP in 0.2 s: 1 kW
  const AnalyticalPredictor p(d);
  const OpEstimate e =
      p.predict_pass(PassCost{0, 1e12, 0, 0}, OpClass::kMatrix, {Precision::kFp32, 1000});
  EXPECT_TRUE(e.power_capped);
  EXPECT_DOUBLE_EQ(e.power_w, 400);
  EXPECT_NEAR(e.energy_j, 200 + 0.2 * 100, 1e-9);
  EXPECT_NEAR(e.time_s, e.energy_j / 400, 1e-12);
}

TEST(AnalyticalPredictor, EmptyPassIsFree) {
  const AnalyticalPredictor p(toy_device());
  const OpEstimate e = p.predict_pass(PassCost{}, OpClass::kView, {Precision::kFp32, 1000});
  EXPECT_EQ(e.time_s, 0);
  EXPECT_EQ(e.energy_j, 0);
}

TEST(AnalyticalPredictor, MissingPeakIsReported) {
  const AnalyticalPredictor p(toy_device());
  EXPECT_THROW(p.predict_pass(PassCost{0, 1, 1, 1}, OpClass::kMatrix, {Precision::kBf16, 1000}),
               InvalidInput);
}

TEST(AnalyticalPredictor, TrainingAddsBackwardToTrainModeForward) {
  const AnalyticalPredictor p(toy_device());
  graph::Network net;
  graph::OpCost cost;
  cost.op_class = OpClass::kMatrix;
  cost.inference = {0, 1e12, 0, 0};
  cost.training_forward = {0, 1e12, 0, 0};
  cost.backward = {0, 2e12, 0, 0};
  graph::Node node;
  const OpEstimate inference =
      p.predict({net, node, cost, Mode::kInference, {Precision::kFp32, 1000}});
  const OpEstimate training =
      p.predict({net, node, cost, Mode::kTraining, {Precision::kFp32, 1000}});
  EXPECT_NEAR(training.time_s, 3 * inference.time_s, 1e-12);
  EXPECT_NEAR(training.forward_time_s, inference.time_s, 1e-12);
  EXPECT_NEAR(training.energy_j, 3 * inference.energy_j, 1e-9);
  EXPECT_NEAR(training.power_w, training.energy_j / training.time_s, 1e-9);
}

TEST(Mode, ParsesNamesAndRejectsOthers) {
  EXPECT_EQ(parse_mode("training", "--mode"), Mode::kTraining);
  EXPECT_THROW(parse_mode("sleeping", "--mode"), InvalidInput);
  EXPECT_EQ(storage_type(Precision::kBf16), graph::DataType::kBFloat16);
  EXPECT_EQ(storage_type(Precision::kTf32), graph::DataType::kFloat32);
}

}  // namespace
}  // namespace nnergy::predict
