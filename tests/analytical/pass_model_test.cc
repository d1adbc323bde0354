#include "nnergy/analytical/pass_model.h"

#include <gtest/gtest.h>

#include "nnergy/core/error.h"

namespace nnergy::analytical {
namespace {

using device::Precision;
using graph::Mode;
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
  d.efficiency.compute = 0.5;
  d.efficiency.memory = 1.0;
  d.efficiency.kernel_overhead_s = 0.0;
  d.archline[Precision::kFp32] = {10e-12, 100e-12, 100, "toy", false, std::nullopt, std::nullopt};
  return d;
}

constexpr double kTolerance = 1e-12;  // relative, floating-point rounding only

TEST(PassModel, ComputeBoundPassAtBoost) {
  const device::DeviceSpec p = toy_device();
  // 1 TFLOP at 0.5 · 10 TFLOP/s = 0.2 s; 1 GB at 1 TB/s = 1 ms: compute-bound.
  const OpEstimate e =
      predict_pass(p, PassCost{0, 1e12, 1e9, 0}, OpClass::kMatrix, {Precision::kFp32, 1000});
  EXPECT_NEAR(e.time_s, 0.2, 0.2 * kTolerance);
  // E = (W/η)·ε_flop + Q·ε_mem + T·π0 = 20 J + 0.1 J + 20 J (seed 003 Eq. 5; at η = 0.5 the
  // units spend 2 TFLOP of slots).
  EXPECT_NEAR(e.energy_j, 40.1, 40.1 * kTolerance);
  EXPECT_NEAR(e.power_w, 200.5, 200.5 * kTolerance);
  EXPECT_TRUE(e.compute_bound);
  EXPECT_FALSE(e.power_capped);
}

TEST(PassModel, OperandPowerAddsAShareOfTheMemoryPowerWhileComputing) {
  device::DeviceSpec d = toy_device();
  d.power_activity.operand_share = 0.5;
  const device::DeviceSpec p = d;
  const OpEstimate e =
      predict_pass(p, PassCost{0, 1e12, 1e9, 0}, OpClass::kMatrix, {Precision::kFp32, 1000});
  // As ComputeBoundPassAtBoost, plus κ·π_mem = 0.5 · 100 pJ/B · 1 TB/s = 50 W for the 0.2 s of
  // compute: 10 J more.
  EXPECT_NEAR(e.time_s, 0.2, 0.2 * kTolerance);
  EXPECT_NEAR(e.energy_j, 50.1, 50.1 * kTolerance);
  // A memory-bound pass draws it only for its compute time (1 GFLOP at 5 TFLOP/s = 0.2 ms).
  const OpEstimate m =
      predict_pass(p, PassCost{0, 1e9, 1e10, 0}, OpClass::kMatrix, {Precision::kFp32, 1000});
  const OpEstimate m0 = predict_pass(toy_device(), PassCost{0, 1e9, 1e10, 0}, OpClass::kMatrix,
                                     {Precision::kFp32, 1000});
  EXPECT_NEAR(m.energy_j - m0.energy_j, 50 * 2e-4, 1e-9);
}

TEST(PassModel, MemoryBoundPassAndLaunchOverhead) {
  device::DeviceSpec d = toy_device();
  d.efficiency.kernel_overhead_s = 5e-6;
  const device::DeviceSpec p = d;
  const OpEstimate e =
      predict_pass(p, PassCost{0, 1e6, 1e9, 2}, OpClass::kElementwise, {Precision::kFp32, 1000});
  EXPECT_NEAR(e.time_s, 1e-3 + 10e-6, 1e-15);
  EXPECT_FALSE(e.compute_bound);
  // The flop slots: 1 MFLOP at η = 0.5 keeps the units busy for 2 MFLOP.
  EXPECT_NEAR(e.energy_j, 2e6 * 10e-12 + 1e9 * 100e-12 + (1e-3 + 10e-6) * 100, 1e-12);
}

TEST(PassModel, NormalizationStatisticsReachAShareOfTheBandwidth) {
  device::DeviceSpec d = toy_device();
  d.efficiency.statistics_memory_efficiency = 0.5;
  const device::DeviceSpec p = d;
  const PassCost pass{0, 0, 1e9, 1};  // 1 GB: 1 ms at the toy's 1 TB/s
  const device::OperatingPoint at{Precision::kFp32, 1000};
  PassTraits statistics;
  statistics.statistics = true;
  EXPECT_NEAR(predict_pass(p, pass, OpClass::kNormalization, at, statistics).time_s, 2e-3, 1e-15);
  EXPECT_NEAR(predict_pass(p, pass, OpClass::kNormalization, at).time_s, 1e-3, 1e-15);

  // Which passes compute statistics: BatchNorm's training passes only (inference folds the
  // running statistics into one affine), LayerNorm's always, Softmax's never.
  graph::OpCost batch_norm;
  batch_norm.op_class = OpClass::kNormalization;
  batch_norm.statistics = graph::StatisticsPasses::kTraining;
  EXPECT_FALSE(PassTraits::of(batch_norm, Mode::kInference, false).statistics);
  EXPECT_TRUE(PassTraits::of(batch_norm, Mode::kTraining, false).statistics);
  EXPECT_TRUE(PassTraits::of(batch_norm, Mode::kTraining, true).statistics);
  graph::OpCost layer_norm = batch_norm;
  layer_norm.statistics = graph::StatisticsPasses::kAll;
  EXPECT_TRUE(PassTraits::of(layer_norm, Mode::kInference, false).statistics);
  graph::OpCost softmax = batch_norm;
  softmax.statistics = graph::StatisticsPasses::kNone;
  EXPECT_FALSE(PassTraits::of(softmax, Mode::kTraining, true).statistics);

  // predict_op applies it to both passes of a training step.
  batch_norm.training_forward = pass;
  batch_norm.backward = pass;
  batch_norm.inference = pass;
  const OpEstimate train = predict_op(p, batch_norm, Mode::kTraining, at);
  EXPECT_NEAR(train.time_s, 4e-3, 1e-15);
  const OpEstimate infer = predict_op(p, batch_norm, Mode::kInference, at);
  EXPECT_NEAR(infer.time_s, 1e-3, 1e-15);
}

TEST(PassModel, ClockScalesComputeTimeAndVoltageScalesEnergy) {
  const device::DeviceSpec p = toy_device();
  const PassCost work{0, 1e12, 0, 0};
  const OpEstimate at_min = predict_pass(p, work, OpClass::kMatrix, {Precision::kFp32, 500});
  EXPECT_NEAR(at_min.time_s, 0.4, 0.4 * kTolerance);  // half the clock, twice the time
  // v = 0.5: ε_flop·v² = 2.5 pJ over W/η = 2e12 flop slots; baseline = idle 50 W +
  // (100 − 50)·v²·(f/f_boost) = 56.25 W.
  EXPECT_NEAR(at_min.energy_j, 2e12 * 2.5e-12 + 0.4 * 56.25, 1e-9);
}

TEST(PassModel, MemoryTimeIgnoresCoreClockAboveHalfBoost) {
  const device::DeviceSpec p = toy_device();
  const PassCost stream{0, 0, 1e9, 0};
  EXPECT_NEAR(predict_pass(p, stream, OpClass::kElementwise, {Precision::kFp32, 500}).time_s,
              predict_pass(p, stream, OpClass::kElementwise, {Precision::kFp32, 1000}).time_s,
              1e-15);
}

TEST(PassModel, MatrixOpsUseTensorPeakElementwiseUseVectorPeak) {
  const device::DeviceSpec p = toy_device();
  const PassCost work{0, 1e12, 0, 0};
  EXPECT_NEAR(predict_pass(p, work, OpClass::kMatrix, {Precision::kFp16, 1000}).time_s, 0.05,
              1e-12);
  EXPECT_NEAR(predict_pass(p, work, OpClass::kElementwise, {Precision::kFp16, 1000}).time_s, 0.2,
              1e-12);
}

TEST(PassModel, TensorEfficiencyAppliesToMatrixUnitsOnly) {
  device::DeviceSpec d = toy_device();
  d.efficiency.tensor = 0.25;
  const device::DeviceSpec p = d;
  const PassCost work{0, 1e12, 0, 0};
  // fp16 matrix work: 1 TFLOP at 0.25 · 40 TFLOP/s; fp32 keeps η = 0.5 of 10 TFLOP/s.
  EXPECT_NEAR(predict_pass(p, work, OpClass::kMatrix, {Precision::kFp16, 1000}).time_s, 0.1, 1e-12);
  EXPECT_NEAR(predict_pass(p, work, OpClass::kMatrix, {Precision::kFp32, 1000}).time_s, 0.2, 1e-12);
  // A peak at most 2.5× fp32 (Pascal's pseudo-fp16, packed half2) is not matrix units.
  d.peak_flop_per_s[Precision::kFp16] = 20e12;
  EXPECT_FALSE(d.has_matrix_units(Precision::kFp16));
  EXPECT_NEAR(predict_pass(d, work, OpClass::kMatrix, {Precision::kFp16, 1000}).time_s,
              1e12 / (0.5 * 20e12), 1e-12);
}

TEST(PassModel, SmallAndThinMatrixKernelsAreSlower) {
  device::DeviceSpec d = toy_device();
  d.sm_count = 10;
  d.efficiency.work_half_flop_per_sm = 1e9;  // half efficiency at 10 GFLOP in all
  d.efficiency.reduction_half = 8;
  const device::DeviceSpec p = d;
  const PassCost work{0, 10e9, 0, 0};
  // Size factor x/(1+x) with x = 10e9/(10·1e9) = 1: half; no reduction length known.
  EXPECT_NEAR(predict_pass(p, work, OpClass::kMatrix, {Precision::kFp32, 1000}).time_s,
              10e9 / (0.5 * 10e12 * 0.5), 1e-12);
  // K = 8 (a depthwise 3×3 has 9): another half.
  EXPECT_NEAR(predict_pass(p, work, OpClass::kMatrix, {Precision::kFp32, 1000}, {8}).time_s,
              10e9 / (0.5 * 10e12 * 0.25), 1e-12);
  // Neither factor touches vector work.
  EXPECT_NEAR(predict_pass(p, work, OpClass::kElementwise, {Precision::kFp32, 1000}, {8}).time_s,
              10e9 / (0.5 * 10e12), 1e-12);
}

TEST(PassModel, ConvolutionKindsScaleTheMatrixRate) {
  device::DeviceSpec d = toy_device();
  d.efficiency.tensor = 0.25;
  d.efficiency.winograd_speedup = 2;
  d.efficiency.grouped_conv_efficiency = 0.5;
  const device::DeviceSpec p = d;
  const PassCost work{0, 1e12, 0, 0};
  const graph::MatrixKind winograd = graph::MatrixKind::kConv3x3;
  const graph::MatrixKind grouped = graph::MatrixKind::kGroupedConv;
  // fp32 on the CUDA cores: 0.2 s for a GEMM, half that for a 3×3 convolution (Winograd).
  EXPECT_NEAR(
      predict_pass(p, work, OpClass::kMatrix, {Precision::kFp32, 1000}, {0, winograd}).time_s, 0.1,
      1e-12);
  // fp16 on the tensor cores: no Winograd (0.1 s as a GEMM).
  EXPECT_NEAR(
      predict_pass(p, work, OpClass::kMatrix, {Precision::kFp16, 1000}, {0, winograd}).time_s, 0.1,
      1e-12);
  // Grouped convolutions reach half the rate on either units.
  EXPECT_NEAR(
      predict_pass(p, work, OpClass::kMatrix, {Precision::kFp32, 1000}, {0, grouped}).time_s, 0.4,
      1e-12);
  EXPECT_NEAR(
      predict_pass(p, work, OpClass::kMatrix, {Precision::kFp16, 1000}, {0, grouped}).time_s, 0.2,
      1e-12);
  // Gradient passes: the backward factor on top of the family's.
  d.efficiency.backward_matrix_efficiency = 0.8;
  const device::DeviceSpec q = d;
  EXPECT_NEAR(
      predict_pass(q, work, OpClass::kMatrix, {Precision::kFp32, 1000}, {0, winograd, true}).time_s,
      0.1 / 0.8, 1e-12);
  EXPECT_NEAR(predict_pass(q, work, OpClass::kMatrix, {Precision::kFp32, 1000}).time_s, 0.2, 1e-12);
  EXPECT_NEAR(predict_pass(q, work, OpClass::kElementwise, {Precision::kFp32, 1000},
                           {0, graph::MatrixKind::kGemm, true})
                  .time_s,
              0.2, 1e-12);
  // Vector work is never a convolution.
  EXPECT_NEAR(
      predict_pass(p, work, OpClass::kElementwise, {Precision::kFp32, 1000}, {0, grouped}).time_s,
      0.2, 1e-12);
}

TEST(PassModel, PowerAboveTdpStretchesTime) {
  device::DeviceSpec d = toy_device();
  d.archline[Precision::kFp32].eps_flop_j = 200e-12;  // 400 J for 2 TFLOP of slots in 0.2 s
  const device::DeviceSpec p = d;
  const OpEstimate e =
      predict_pass(p, PassCost{0, 1e12, 0, 0}, OpClass::kMatrix, {Precision::kFp32, 1000});
  EXPECT_TRUE(e.power_capped);
  EXPECT_DOUBLE_EQ(e.power_w, 400);
  EXPECT_NEAR(e.energy_j, 400 + 0.2 * 100, 1e-9);
  EXPECT_NEAR(e.time_s, e.energy_j / 400, 1e-12);
}

TEST(PassModel, EmptyPassIsFree) {
  const device::DeviceSpec p = toy_device();
  const OpEstimate e = predict_pass(p, PassCost{}, OpClass::kView, {Precision::kFp32, 1000});
  EXPECT_EQ(e.time_s, 0);
  EXPECT_EQ(e.energy_j, 0);
}

TEST(PassModel, MissingPeakIsReported) {
  const device::DeviceSpec p = toy_device();
  EXPECT_THROW(predict_pass(p, PassCost{0, 1, 1, 1}, OpClass::kMatrix, {Precision::kBf16, 1000}),
               InvalidInput);
}

TEST(PassModel, TrainingAddsBackwardToTrainModeForward) {
  const device::DeviceSpec p = toy_device();
  graph::OpCost cost;
  cost.op_class = OpClass::kMatrix;
  cost.inference = {0, 1e12, 0, 0};
  cost.training_forward = {0, 1e12, 0, 0};
  cost.backward = {0, 2e12, 0, 0};
  const OpEstimate inference = predict_op(p, cost, Mode::kInference, {Precision::kFp32, 1000});
  const OpEstimate training = predict_op(p, cost, Mode::kTraining, {Precision::kFp32, 1000});
  EXPECT_NEAR(training.time_s, 3 * inference.time_s, 1e-12);
  EXPECT_NEAR(training.forward_time_s, inference.time_s, 1e-12);
  EXPECT_NEAR(training.energy_j, 3 * inference.energy_j, 1e-9);
  EXPECT_NEAR(training.power_w, training.energy_j / training.time_s, 1e-9);
}

}  // namespace
}  // namespace nnergy::analytical
