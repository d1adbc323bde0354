#include "nnergy/network/network_prediction.h"

#include <gtest/gtest.h>

#include "nnergy/core/error.h"
#include "nnergy/device/device_catalog.h"
#include "nnergy/graph/onnx_importer.h"
#include "nnergy/graph/zoo.h"
#include "nnergy/network/clock_sweep.h"
#include "nnergy/predict/analytical_predictor.h"

namespace nnergy::network {
namespace {

using graph::Network;
using graph::Node;
using graph::TensorInfo;
using graph::TensorRole;

const std::filesystem::path kDataDir = NNERGY_TEST_DATA_DIR;

std::size_t tensor(Network& net, const std::string& name, graph::Shape shape, TensorRole role) {
  TensorInfo t;
  t.name = name;
  t.shape = std::move(shape);
  t.role = role;
  return net.add_tensor(std::move(t));
}

void node(Network& net, const std::string& op, std::vector<std::size_t> in,
          std::vector<std::size_t> out, const std::string& path) {
  Node n;
  n.name = "/" + path + "/" + op;
  n.op_type = op;
  n.module_path = path;
  n.inputs = std::move(in);
  n.outputs = std::move(out);
  net.add_node(std::move(n));
}

// x → MatMul(w1) → Relu → MatMul(w2) → Relu, plus a Shape node; the two Relus are identical.
Network mlp() {
  Network net;
  net.name = "mlp";
  const auto x = tensor(net, "x", {64, 256}, TensorRole::kDataInput);
  const auto w1 = tensor(net, "w1", {256, 256}, TensorRole::kParameter);
  const auto w2 = tensor(net, "w2", {256, 256}, TensorRole::kParameter);
  const auto h1 = tensor(net, "h1", {64, 256}, TensorRole::kActivation);
  const auto r1 = tensor(net, "r1", {64, 256}, TensorRole::kActivation);
  const auto h2 = tensor(net, "h2", {64, 256}, TensorRole::kActivation);
  const auto r2 = tensor(net, "r2", {64, 256}, TensorRole::kActivation);
  TensorInfo shape_out;
  shape_out.name = "s";
  shape_out.shape = {2};
  shape_out.dtype = graph::DataType::kInt64;
  const auto s = net.add_tensor(shape_out);
  node(net, "MatMul", {x, w1}, {h1}, "fc1");
  node(net, "Relu", {h1}, {r1}, "act1");
  node(net, "MatMul", {r1, w2}, {h2}, "fc2");
  node(net, "Relu", {h2}, {r2}, "act2");
  node(net, "Shape", {r2}, {s}, "");
  net.propagate_tensor_flags();
  return net;
}

const device::DeviceSpec& a100() {
  static const device::DeviceCatalog catalog =
      device::DeviceCatalog::load(kDataDir / "devices.json");
  return catalog.find("a100-40gb");
}

PredictionSettings settings_at_boost(graph::Mode mode) {
  PredictionSettings s;
  s.mode = mode;
  s.batch = 64;
  s.point = {device::Precision::kFp32, a100().clock.boost_mhz};
  return s;
}

TEST(NetworkPrediction, TotalsAreSumsOfLayers) {
  const Network net = mlp();
  const CostedNetwork costed(net);
  const predict::AnalyticalPredictor p(a100());
  const NetworkPrediction r =
      predict_network(costed, p, settings_at_boost(graph::Mode::kInference));
  ASSERT_EQ(r.layers.size(), 4u);  // the Shape node costs nothing and is counted apart
  EXPECT_EQ(r.shape_nodes, 1u);
  EXPECT_EQ(r.unique_operations, 3u);  // fc1 (data input), relu (twice), fc2
  double time = 0, energy = 0;
  for (const LayerPrediction& l : r.layers) {
    time += l.time_s;
    energy += l.energy_j;
    EXPECT_NEAR(l.energy_j, l.power_w * l.time_s, 1e-12 * l.energy_j) << l.name;
  }
  EXPECT_NEAR(r.totals.time_s, time, 1e-15);           // seed 004 Eq. 3
  EXPECT_NEAR(r.totals.energy_j, energy, 1e-15);       // seed 004 Eq. 5
  EXPECT_NEAR(r.totals.power_w, energy / time, 1e-9);  // seed 004 Eq. 4
  EXPECT_NEAR(r.totals.edp_j_s, energy * time, 1e-18);
  EXPECT_NEAR(r.totals.energy_per_sample_j, energy / 64, 1e-15);
  EXPECT_DOUBLE_EQ(r.totals.mac_count, 2.0 * 64 * 256 * 256);
  EXPECT_EQ(r.layers[1].time_s, r.layers[3].time_s);  // same unique operation
  EXPECT_EQ(r.layers[1].module_path, "act1");
  EXPECT_FALSE(r.optimizer_step_included);
}

TEST(NetworkPrediction, TrainingAddsBackwardAndOptimizerStep) {
  const Network net = mlp();
  const CostedNetwork costed(net);
  const predict::AnalyticalPredictor p(a100());
  const auto inference = predict_network(costed, p, settings_at_boost(graph::Mode::kInference));
  const auto training = predict_network(costed, p, settings_at_boost(graph::Mode::kTraining));
  ASSERT_EQ(training.layers.size(), 5u);
  EXPECT_EQ(training.layers.back().name, "optimizer.step");
  EXPECT_EQ(training.layers.back().parameter_count, 2 * 256 * 256);
  EXPECT_TRUE(training.optimizer_step_included);
  // fc1 gets only a weight gradient, fc2 data + weight gradients: 1 + 1 + 2 + 1 = 5 × forward
  // MACs... in MAC terms: forward 2·M, backward (1 + 2)·M.
  EXPECT_DOUBLE_EQ(training.totals.mac_count, 5.0 / 2.0 * inference.totals.mac_count);
  EXPECT_GT(training.totals.time_s, 2 * inference.totals.time_s);
}

// The mlp's four compute layers are one kernel each and run for microseconds on an A100; a host
// that needs far longer to launch each kernel leaves the GPU waiting.
TEST(NetworkPrediction, HostLaunchCostMakesTheIterationTheCriticalPath) {
  const Network net = mlp();
  const CostedNetwork costed(net);
  const predict::AnalyticalPredictor p(a100());
  const auto gpu_bound = predict_network(costed, p, settings_at_boost(graph::Mode::kInference));
  PredictionSettings settings = settings_at_boost(graph::Mode::kInference);
  settings.host_launch_s = 1e-3;  // 1 ms per launch: far slower than any of these kernels
  const auto host_bound = predict_network(costed, p, settings);
  // Host: launches at 1, 2, 3, 4 ms; the GPU runs the last kernel after the 4th launch.
  const auto& last = gpu_bound.layers.back();
  EXPECT_NEAR(host_bound.totals.time_s, 4e-3 + last.time_s, 1e-12);
  EXPECT_NEAR(host_bound.totals.gpu_time_s, gpu_bound.totals.time_s, 1e-15);
  EXPECT_DOUBLE_EQ(host_bound.totals.kernel_count, 4);
  EXPECT_DOUBLE_EQ(host_bound.totals.host_launch_s, 4e-3);
  // The wait is a pseudo-layer at idle power, so layer energies still sum to the total.
  ASSERT_EQ(host_bound.layers.back().op_type, kHostWaitOp);
  EXPECT_NEAR(host_bound.layers.back().time_s, host_bound.totals.time_s - gpu_bound.totals.time_s,
              1e-12);
  EXPECT_DOUBLE_EQ(host_bound.layers.back().power_w, a100().idle_w);
  double energy = 0;
  for (const auto& l : host_bound.layers) energy += l.energy_j;
  EXPECT_NEAR(energy, host_bound.totals.energy_j, 1e-12);
  // Without a launch cost nothing changes.
  EXPECT_EQ(gpu_bound.layers.back().op_type, "Relu");
  EXPECT_DOUBLE_EQ(gpu_bound.totals.gpu_time_s, gpu_bound.totals.time_s);
}

TEST(NetworkPrediction, UnknownOperatorsAreListed) {
  Network net;
  const auto x = tensor(net, "x", {8, 8}, TensorRole::kDataInput);
  const auto y = tensor(net, "y", {8, 8}, TensorRole::kActivation);
  node(net, "Det", {x}, {y}, "head");
  net.propagate_tensor_flags();
  const predict::AnalyticalPredictor p(a100());
  const auto r = predict_network(CostedNetwork(net), p, settings_at_boost(graph::Mode::kInference));
  ASSERT_EQ(r.unknown_ops.size(), 1u);
  EXPECT_EQ(r.unknown_ops[0], "Det");
  EXPECT_FALSE(r.layers[0].known_op);
  EXPECT_FALSE(r.layers[0].whitelisted);
  EXPECT_GT(r.layers[0].energy_j, 0);
}

// Seed 000 measured a U-shaped energy over the A30's clocks with the optimum at 900 MHz; the
// analytical model must reproduce an interior optimum, with the EDP optimum at or above it.
TEST(ClockSweep, ResNet50OnA30IsUShaped) {
  static const device::DeviceCatalog catalog =
      device::DeviceCatalog::load(kDataDir / "devices.json");
  const device::DeviceSpec& a30 = catalog.find("a30");
  graph::DimBindings bindings;
  bindings.batch = 32;
  const Network net = graph::import_onnx(graph::resolve_model("resnet50", kDataDir), bindings);
  const CostedNetwork costed(net);
  const predict::AnalyticalPredictor p(a30);
  PredictionSettings s;
  s.batch = 32;
  s.point = {device::Precision::kFp32, a30.clock.boost_mhz};
  const ClockSweep sweep = sweep_clocks(costed, p, s, a30.supported_clocks_mhz());
  ASSERT_GT(sweep.points.size(), 10u);
  const double optimum = sweep.points[sweep.energy_optimal].clock_mhz;
  EXPECT_GT(optimum, a30.clock.min_mhz);
  EXPECT_LT(optimum, a30.clock.boost_mhz);
  EXPECT_NEAR(optimum, 900, 200);
  EXPECT_GE(sweep.points[sweep.edp_optimal].clock_mhz, optimum);
  for (std::size_t i = 1; i < sweep.points.size(); ++i) {
    EXPECT_LT(sweep.points[i].time_s, sweep.points[i - 1].time_s);  // faster clock, less time
  }
}

// NeuralPower Table 7: VGG-16, top-5 error 7.30 %, 1178.9 mJ per image.
TEST(EnergyPrecisionRatio, ReproducesNeuralPowerTable7) {
  EXPECT_NEAR(energy_precision_ratio(0.073, 1, 1178.9e-3), 86.062e-3, 0.0005 * 86.062e-3);
  EXPECT_NEAR(energy_precision_ratio(0.073, 2, 1178.9e-3), 6.283e-3, 0.0005 * 6.283e-3);
  EXPECT_NEAR(energy_precision_ratio(0.073, 4, 1178.9e-3), 0.033e-3, 0.02 * 0.033e-3);
  EXPECT_THROW(energy_precision_ratio(7.3, 1, 1.0), InvalidInput);  // a percentage, not a fraction
  EXPECT_THROW(energy_precision_ratio(0.1, -1, 1.0), InvalidInput);
}

}  // namespace
}  // namespace nnergy::network
