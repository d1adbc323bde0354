#include "nnergy/network/time_evaluation.h"

#include <gtest/gtest.h>

#include "nnergy/graph/zoo.h"
#include "nnergy/network/network_prediction.h"
#include "nnergy/predict/analytical_predictor.h"

namespace nnergy::network {
namespace {

const std::filesystem::path kDataDir = NNERGY_TEST_DATA_DIR;

// Ratios and shares below are quotients of a few exact numbers.
constexpr double kTolerance = 1e-12;

const device::DeviceCatalog& catalog() {
  static const device::DeviceCatalog c = device::DeviceCatalog::load(kDataDir / "devices.json");
  return c;
}

NetworkTimeMeasurement resnet18(double measured_s, graph::Mode mode, TimedPart part) {
  NetworkTimeMeasurement m;
  m.id = "r" + std::to_string(measured_s);
  m.network = "resnet18";
  m.device_id = "a100-40gb";
  m.model = graph::resolve_model("resnet18", kDataDir);
  m.bindings.batch = 16;
  m.mode = mode;
  m.part = part;
  m.measured_s = measured_s;
  return m;
}

// The analytical prediction of resnet18 at batch 16 on the A100, computed directly.
NetworkPrediction direct(graph::Mode mode) {
  graph::DimBindings b;
  b.batch = 16;
  const graph::Network net = graph::import_onnx(graph::resolve_model("resnet18", kDataDir), b);
  const CostedNetwork costed(net);
  const predict::AnalyticalPredictor p(catalog().find("a100-40gb"));
  PredictionSettings s;
  s.mode = mode;
  s.batch = 16;
  s.point = {device::Precision::kFp32, catalog().find("a100-40gb").clock.boost_mhz};
  return predict_network(costed, p, s);
}

TEST(TimeEvaluation, RatiosFollowThePredictionOfEachPart) {
  const NetworkPrediction inference = direct(graph::Mode::kInference);
  const NetworkPrediction training = direct(graph::Mode::kTraining);
  double forward_s = 0;
  double optimizer_s = 0;
  for (const auto& l : training.layers) {
    if (l.node_index) forward_s += l.forward_time_s;
    if (!l.node_index) optimizer_s += l.time_s;
  }
  const TimeEvaluation e = evaluate_times(
      {resnet18(inference.totals.time_s, graph::Mode::kInference, TimedPart::kIteration),
       resnet18(2 * forward_s, graph::Mode::kTraining, TimedPart::kForward),
       resnet18(training.totals.time_s - optimizer_s, graph::Mode::kTraining,
                TimedPart::kIteration)},
      catalog());
  ASSERT_EQ(e.evaluated.size(), 3u);
  EXPECT_NEAR(e.evaluated[0].ratio(), 1.0, kTolerance);
  EXPECT_NEAR(e.evaluated[1].ratio(), 0.5, kTolerance);
  EXPECT_NEAR(e.evaluated[2].ratio(), 1.0, kTolerance);  // no optimizer step in the measurement
}

TEST(TimeEvaluation, SingleNodesAreTheirGpuTimesSummedWithoutTheHost) {
  const NetworkPrediction inference = direct(graph::Mode::kInference);
  // The first two non-shape layers, timed one by one.
  NetworkTimeMeasurement m = resnet18(1e-3, graph::Mode::kInference, TimedPart::kIteration);
  double expected_s = 0;
  for (const LayerPrediction& layer : inference.layers) {
    if (m.nodes.size() == 2) break;
    m.nodes.push_back(layer.name);
    expected_s += layer.time_s;
  }
  // A host launch cost that would dominate a whole-network time changes nothing here.
  const TimeEvaluation e = evaluate_times({m}, catalog(), {1e-3});
  ASSERT_EQ(e.evaluated.size(), 1u);
  EXPECT_NEAR(e.evaluated[0].predicted_s, expected_s, expected_s * kTolerance);
  // A node the network lacks is named, not ignored.
  m.nodes.push_back("/no/such/Conv");
  const TimeEvaluation bad = evaluate_times({m}, catalog());
  ASSERT_EQ(bad.failures.size(), 1u);
  EXPECT_NE(bad.failures[0].second.find("/no/such/Conv"), std::string::npos);
}

TEST(TimeEvaluation, AnInputCopyComesFirstAtTheGivenRate) {
  NetworkTimeMeasurement m = resnet18(1e-3, graph::Mode::kInference, TimedPart::kIteration);
  TimeEvaluationSettings s = TimeEvaluationSettings::same_host(20e-6);
  s.input_copy_bytes_per_s = 1e9;
  const double without = evaluate_times({m}, catalog(), s).evaluated.at(0).predicted_s;
  m.input_copied = true;
  const double with = evaluate_times({m}, catalog(), s).evaluated.at(0).predicted_s;
  // 16 × 3 × 224 × 224 fp32 values at 1 GB/s, before the first kernel (nothing overlaps it).
  EXPECT_NEAR(with - without, 16.0 * 3 * 224 * 224 * 4 / 1e9, 1e-12);
}

TEST(TimeEvaluation, TrainingUsesItsOwnHostLaunchTime) {
  const NetworkTimeMeasurement training =
      resnet18(1e-3, graph::Mode::kTraining, TimedPart::kIteration);
  const NetworkTimeMeasurement inference =
      resnet18(1e-3, graph::Mode::kInference, TimedPart::kIteration);
  const TimeEvaluationSettings both{10e-6, 80e-6, 0};
  const TimeEvaluation e = evaluate_times({training, inference}, catalog(), both);
  ASSERT_EQ(e.evaluated.size(), 2u);
  EXPECT_DOUBLE_EQ(e.evaluated[0].predicted_s,
                   evaluate_times({training}, catalog(), TimeEvaluationSettings::same_host(80e-6))
                       .evaluated.at(0)
                       .predicted_s);
  EXPECT_DOUBLE_EQ(e.evaluated[1].predicted_s,
                   evaluate_times({inference}, catalog(), TimeEvaluationSettings::same_host(10e-6))
                       .evaluated.at(0)
                       .predicted_s);
}

// Predicted time of `m` on the A100 with Winograd making 3×3 convolutions twice as fast, no host.
double with_winograd(const NetworkTimeMeasurement& m) {
  graph::DimBindings b;
  b.batch = 16;
  const graph::Network net = graph::import_onnx(m.model, b);
  const CostedNetwork costed(net);
  device::DeviceSpec a100 = catalog().find("a100-40gb");
  a100.efficiency.winograd_speedup = 2;
  return TimedNetwork(costed, m).predict_s(a100, 0);
}

TEST(TimeEvaluation, AKernelLibraryWithoutWinogradRunsThreeByThreeConvolutionsAsGemms) {
  NetworkTimeMeasurement m = resnet18(1e-3, graph::Mode::kTraining, TimedPart::kIteration);
  const double all = with_winograd(m);
  m.winograd = WinogradPasses::kForward;  // cuDNN 5.0
  const double forward_only = with_winograd(m);
  m.winograd = WinogradPasses::kNone;  // cuDNN 4
  const double none = with_winograd(m);
  EXPECT_LT(all, forward_only);
  EXPECT_LT(forward_only, none);
  // Inference has no gradient pass: forward-only Winograd is all of it.
  NetworkTimeMeasurement inference = m;
  inference.mode = graph::Mode::kInference;
  inference.winograd = WinogradPasses::kForward;
  const double inference_forward_only = with_winograd(inference);
  inference.winograd = WinogradPasses::kAll;
  EXPECT_DOUBLE_EQ(inference_forward_only, with_winograd(inference));
}

TEST(TimeEvaluation, MeasurementsThatCannotBePredictedAreReportedWithTheReason) {
  NetworkTimeMeasurement fp16 = resnet18(1e-3, graph::Mode::kInference, TimedPart::kIteration);
  fp16.device_id = "titan-x";  // Maxwell: no fp16 peak in the catalog
  fp16.precision = device::Precision::kFp16;
  NetworkTimeMeasurement missing = fp16;
  missing.device_id = "a100-40gb";
  missing.model = "/nonexistent/model.onnx";
  const TimeEvaluation e = evaluate_times({fp16, missing}, catalog());
  EXPECT_TRUE(e.evaluated.empty());
  ASSERT_EQ(e.failures.size(), 2u);
  EXPECT_NE(e.failures[0].second.find("titan-x has no fp16 peak"), std::string::npos);
  EXPECT_NE(e.failures[1].second.find("/nonexistent/model.onnx"), std::string::npos);
}

}  // namespace
}  // namespace nnergy::network
