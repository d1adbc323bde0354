#include "nnergy/profile/op_runner.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "nnergy/core/error.h"
#include "nnergy/graph/onnx_importer.h"
#include "nnergy/profile/op_timer.h"

namespace nnergy::profile {
namespace {

using graph::AttributeValue;
using graph::Network;
using graph::Node;
using graph::Shape;
using graph::TensorInfo;
using graph::TensorRole;

const std::filesystem::path kDataDir = NNERGY_TEST_DATA_DIR;

// Tiny shapes and short loops: the suite runs on loaded two-core machines.
constexpr double kMinTime = 0.01;

struct Input {
  Shape shape;
  TensorRole role = TensorRole::kActivation;
  graph::DataType dtype = graph::DataType::kFloat32;
};

// A network holding the single node `op` with the given inputs and output shape.
Network single_node(const std::string& op, const std::vector<Input>& inputs, const Shape& output,
                    graph::Attributes attributes = {}) {
  Network net;
  net.name = op;
  Node node;
  node.name = "/" + op;
  node.op_type = op;
  node.attributes = std::move(attributes);
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    TensorInfo t;
    t.name = "in" + std::to_string(i);
    t.shape = inputs[i].shape;
    t.role = inputs[i].role;
    t.dtype = inputs[i].dtype;
    node.inputs.push_back(net.add_tensor(std::move(t)));
  }
  TensorInfo out;
  out.name = "out";
  out.shape = output;
  node.outputs.push_back(net.add_tensor(std::move(out)));
  net.add_node(std::move(node));
  net.propagate_tensor_flags();
  return net;
}

using Ints = std::vector<std::int64_t>;
constexpr TensorRole kParam = TensorRole::kParameter;
constexpr TensorRole kBuffer = TensorRole::kBuffer;

struct OpCase {
  std::string label;
  Network net;
};

std::vector<OpCase> op_cases() {
  std::vector<OpCase> c;
  c.push_back(
      {"Conv2d", single_node("Conv", {{{1, 3, 8, 8}}, {{4, 3, 3, 3}, kParam}, {{4}, kParam}},
                             {1, 4, 8, 8}, {{"pads", Ints{1, 1, 1, 1}}})});
  c.push_back({"Conv2dStridedGrouped",
               single_node("Conv", {{{1, 4, 9, 9}}, {{4, 2, 3, 3}, kParam}}, {1, 4, 4, 4},
                           {{"strides", Ints{2, 2}}, {"group", std::int64_t{2}}})});
  c.push_back({"Conv2dAsymmetricPads", single_node("Conv", {{{1, 2, 6, 6}}, {{3, 2, 2, 2}, kParam}},
                                                   {1, 3, 6, 6}, {{"pads", Ints{0, 0, 1, 1}}})});
  c.push_back({"Conv2dSameUpper",
               single_node("Conv", {{{1, 2, 7, 7}}, {{3, 2, 3, 3}, kParam}}, {1, 3, 4, 4},
                           {{"strides", Ints{2, 2}}, {"auto_pad", std::string("SAME_UPPER")}})});
  c.push_back(
      {"Conv1dDilated", single_node("Conv", {{{2, 3, 16}}, {{5, 3, 3}, kParam}, {{5}, kParam}},
                                    {2, 5, 12}, {{"dilations", Ints{2}}})});
  c.push_back(
      {"ConvTranspose2d",
       single_node(
           "ConvTranspose", {{{1, 4, 5, 5}}, {{4, 2, 3, 3}, kParam}, {{2}, kParam}}, {1, 2, 10, 10},
           {{"strides", Ints{2, 2}}, {"pads", Ints{1, 1, 1, 1}}, {"output_padding", Ints{1, 1}}})});
  c.push_back({"GemmLinear", single_node("Gemm", {{{4, 16}}, {{8, 16}, kParam}, {{8}, kParam}},
                                         {4, 8}, {{"transB", std::int64_t{1}}})});
  c.push_back({"GemmGeneral", single_node("Gemm", {{{16, 4}}, {{16, 8}, kParam}, {{4, 8}, kParam}},
                                          {4, 8}, {{"transA", std::int64_t{1}}, {"alpha", 0.5}})});
  c.push_back(
      {"MatMulParameter", single_node("MatMul", {{{2, 5, 16}}, {{16, 8}, kParam}}, {2, 5, 8})});
  c.push_back(
      {"MatMulBatched", single_node("MatMul", {{{2, 3, 5, 8}}, {{2, 3, 8, 5}}}, {2, 3, 5, 5})});
  c.push_back(
      {"BatchNorm2d",
       single_node("BatchNormalization",
                   {{{2, 4, 5, 5}}, {{4}, kParam}, {{4}, kParam}, {{4}, kBuffer}, {{4}, kBuffer}},
                   {2, 4, 5, 5}, {{"epsilon", 1e-5}})});
  c.push_back({"LayerNorm",
               single_node("LayerNormalization", {{{2, 5, 16}}, {{16}, kParam}, {{16}, kParam}},
                           {2, 5, 16}, {{"axis", std::int64_t{-1}}})});
  for (const char* op : {"Relu", "Sigmoid", "Tanh", "HardSwish", "HardSigmoid"}) {
    c.push_back({op, single_node(op, {{{2, 3, 4, 4}}}, {2, 3, 4, 4})});
  }
  c.push_back({"HardSigmoidTorchvision", single_node("HardSigmoid", {{{2, 16}}}, {2, 16},
                                                     {{"alpha", 1.0 / 6.0}, {"beta", 0.5}})});
  c.push_back({"Gelu", single_node("Gelu", {{{2, 16}}}, {2, 16})});
  c.push_back({"GeluTanh",
               single_node("Gelu", {{{2, 16}}}, {2, 16}, {{"approximate", std::string("tanh")}})});
  c.push_back({"MaxPool2d", single_node("MaxPool", {{{1, 3, 9, 9}}}, {1, 3, 5, 5},
                                        {{"kernel_shape", Ints{3, 3}},
                                         {"strides", Ints{2, 2}},
                                         {"pads", Ints{1, 1, 1, 1}}})});
  c.push_back({"MaxPool2dCeil", single_node("MaxPool", {{{1, 3, 8, 8}}}, {1, 3, 4, 4},
                                            {{"kernel_shape", Ints{3, 3}},
                                             {"strides", Ints{2, 2}},
                                             {"ceil_mode", std::int64_t{1}}})});
  c.push_back({"AvgPool2d", single_node("AveragePool", {{{1, 3, 8, 8}}}, {1, 3, 4, 4},
                                        {{"kernel_shape", Ints{2, 2}}, {"strides", Ints{2, 2}}})});
  c.push_back(
      {"GlobalAveragePool", single_node("GlobalAveragePool", {{{2, 6, 5, 5}}}, {2, 6, 1, 1})});
  c.push_back(
      {"Softmax", single_node("Softmax", {{{2, 3, 7}}}, {2, 3, 7}, {{"axis", std::int64_t{1}}})});
  c.push_back({"AddBroadcast", single_node("Add", {{{2, 3, 4}}, {{4}, kParam}}, {2, 3, 4})});
  c.push_back({"AddActivations", single_node("Add", {{{2, 3, 4}}, {{2, 3, 4}}}, {2, 3, 4})});
  c.push_back({"Mul", single_node("Mul", {{{2, 3, 4}}, {{2, 3, 4}}}, {2, 3, 4})});
  c.push_back({"Embedding", single_node("Gather",
                                        {{{50, 8}, kParam},
                                         {{2, 6}, TensorRole::kDataInput, graph::DataType::kInt64}},
                                        {2, 6, 8})});
  c.push_back(
      {"GatherActivation",
       single_node("Gather", {{{2, 5, 8}}, {{}, TensorRole::kConstant, graph::DataType::kInt64}},
                   {2, 8}, {{"axis", std::int64_t{1}}})});
  return c;
}

std::unique_ptr<OpRunner> build(const Network& net, RunnerOptions options = {}) {
  options.instances = std::min(options.instances, 3);
  return OpRunner::build(net, net.nodes().front(), options);
}

TEST(OpRunner, EverySupportedOpHasACase) {
  std::set<std::string> covered;
  for (const OpCase& c : op_cases()) covered.insert(c.net.nodes().front().op_type);
  std::set<std::string> uncovered;
  for (const std::string& op : supported_ops()) {
    if (!covered.count(op) && op != "Sub" && op != "Div") uncovered.insert(op);
  }
  EXPECT_TRUE(uncovered.empty()) << "no test case for " << *uncovered.begin();
}

TEST(OpRunner, EachOpMatchesTheIrShapeAndRunsInBothModes) {
  for (const OpCase& c : op_cases()) {
    SCOPED_TRACE(c.label);
    const Shape expected = c.net.tensor(c.net.nodes().front().outputs.front()).shape;
    std::unique_ptr<OpRunner> runner;
    ASSERT_NO_THROW(runner = build(c.net));
    EXPECT_EQ(runner->output_shape(graph::Mode::kInference), expected);
    EXPECT_EQ(runner->output_shape(graph::Mode::kTraining), expected);
    EXPECT_NO_THROW(runner->run(graph::Mode::kInference, 4));
    EXPECT_NO_THROW(runner->run(graph::Mode::kTraining, 4));
    EXPECT_TRUE(runner->has_backward());
  }
}

TEST(OpRunner, Bfloat16Runs) {
  const Network net = single_node("Conv", {{{1, 3, 8, 8}}, {{4, 3, 3, 3}, kParam}}, {1, 4, 6, 6});
  RunnerOptions options;
  options.dtype = graph::DataType::kBFloat16;
  auto runner = build(net, options);
  EXPECT_EQ(runner->output_shape(graph::Mode::kInference), (Shape{1, 4, 6, 6}));
  EXPECT_NO_THROW(runner->run(graph::Mode::kTraining, 2));
  EXPECT_NE(runner->description().find("bf16"), std::string::npos) << runner->description();
}

TEST(OpRunner, UnsupportedDtypeIsInvalidInput) {
  const Network net = single_node("Relu", {{{2, 3}}}, {2, 3});
  RunnerOptions options;
  options.dtype = graph::DataType::kInt8;
  EXPECT_THROW(build(net, options), InvalidInput);
  options.dtype = graph::DataType::kFloat16;  // CUDA only
  EXPECT_THROW(build(net, options), InvalidInput);
}

TEST(OpRunner, CudaDeviceLibTorchCannotReachIsDeviceError) {
  const Network net = single_node("Relu", {{{2, 3}}}, {2, 3});
  RunnerOptions options;
  options.cuda_device = cuda_device_count();  // one past the last device LibTorch sees
  try {
    build(net, options);
    FAIL() << "expected DeviceError";
  } catch (const DeviceError& e) {
    EXPECT_NE(std::string(e.what()).find("cuda:" + std::to_string(options.cuda_device)),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(OpRunner::build_network(net, options), DeviceError);
}

TEST(OpRunner, UnsupportedOpIsInvalidInputNamingIt) {
  const Network net = single_node("NonMaxSuppression", {{{1, 4, 4}}}, {1, 3});
  try {
    build(net);
    FAIL() << "expected InvalidInput";
  } catch (const InvalidInput& e) {
    EXPECT_NE(std::string(e.what()).find("NonMaxSuppression"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(is_supported_op("NonMaxSuppression"));
  EXPECT_TRUE(is_supported_op("Conv"));
}

TEST(OpRunner, WrongIrShapeIsDetectedByOutputShape) {
  // The IR claims a 3×3 kernel keeps 8×8 without padding: the runner reports the true 6×6.
  const Network net = single_node("Conv", {{{1, 3, 8, 8}}, {{4, 3, 3, 3}, kParam}}, {1, 4, 8, 8});
  EXPECT_EQ(build(net)->output_shape(graph::Mode::kInference), (Shape{1, 4, 6, 6}));
}

TEST(OpRunner, InstancesAreCappedByTheParameterBlock) {
  const Network net =
      single_node("Gemm", {{{1, 64}}, {{64, 64}, kParam}}, {1, 64}, {{"transB", std::int64_t{1}}});
  RunnerOptions options;
  options.instances = 8;
  options.max_parameter_block_bytes = 3 * 64 * 64 * 4;
  EXPECT_EQ(OpRunner::build(net, net.nodes().front(), options)->instances(), 3);
  options.max_parameter_block_bytes = 1;
  EXPECT_EQ(OpRunner::build(net, net.nodes().front(), options)->instances(), 1);
  // Nothing to cycle through without parameters.
  const Network relu = single_node("Relu", {{{2, 3}}}, {2, 3});
  EXPECT_EQ(OpRunner::build(relu, relu.nodes().front(), {})->instances(), 1);
}

TEST(OpRunner, DataInputWithoutParametersHasNoBackward) {
  const Network net = single_node("Relu", {{{2, 3}, TensorRole::kDataInput}}, {2, 3});
  auto runner = build(net);
  EXPECT_FALSE(runner->has_backward());
  EXPECT_NO_THROW(runner->run(graph::Mode::kTraining, 2));
}

TEST(OpRunner, ThreadsCanBeSet) {
  const int before = cpu_threads();
  set_cpu_threads(2);
  EXPECT_EQ(cpu_threads(), 2);
  set_cpu_threads(before);
  EXPECT_THROW(set_cpu_threads(0), InvalidInput);
}

TEST(OpRunner, Resnet18NodesBuild) {
  graph::DimBindings bindings;
  bindings.batch = 1;
  const Network net = graph::import_onnx(kDataDir / "zoo" / "resnet18.onnx", bindings);
  const std::set<std::string> wanted = {
      "Conv", "BatchNormalization", "Relu", "MaxPool", "GlobalAveragePool", "Gemm", "Add"};
  std::set<std::string> seen;
  RunnerOptions options;
  options.instances = 1;
  for (const Node& node : net.nodes()) {
    if (!wanted.count(node.op_type)) continue;
    SCOPED_TRACE(node.name);
    seen.insert(node.op_type);
    std::unique_ptr<OpRunner> runner;
    ASSERT_NO_THROW(runner = OpRunner::build(net, node, options));
    EXPECT_FALSE(runner->description().empty());
  }
  EXPECT_TRUE(seen.count("Conv") && seen.count("Gemm") && seen.count("MaxPool") &&
              seen.count("GlobalAveragePool") && seen.count("Add") && seen.count("Relu"));
}

TEST(OpRunner, Resnet18FirstConvMatchesIrShape) {
  const Network net = graph::import_onnx(kDataDir / "zoo" / "resnet18.onnx", {});
  for (const Node& node : net.nodes()) {
    if (node.op_type != "Conv" && node.op_type != "MaxPool") continue;
    SCOPED_TRACE(node.name);
    RunnerOptions options;
    options.instances = 1;
    EXPECT_EQ(OpRunner::build(net, node, options)->output_shape(graph::Mode::kInference),
              net.tensor(node.outputs.front()).shape);
  }
}

TEST(OpTimer, CalibratedRunLastsAtLeastMinTime) {
  const Network net = single_node("Relu", {{{4, 64}}}, {4, 64});
  auto runner = build(net);
  TimingOptions options;
  options.min_time_s = kMinTime;
  options.repeats = 3;
  const OpTiming t = time_op(*runner, graph::Mode::kInference, options);
  EXPECT_GT(t.mean_s, 0);
  EXPECT_GE(t.stddev_s, 0);
  EXPECT_GE(t.iterations, 1);
  EXPECT_GT(t.calibration_s, 0);
  ASSERT_EQ(t.measurements_s.size(), 3u);
  for (double m : t.measurements_s) {
    EXPECT_GE(m, kMinTime);
    EXPECT_NEAR(m / static_cast<double>(t.iterations), t.mean_s, 10 * t.mean_s);
  }
  // A calibrated count is large enough that a tiny Relu needs more than one iteration.
  EXPECT_GT(t.iterations, 1);
}

TEST(OpTimer, TrainingTimesABackwardPass) {
  const Network net = single_node("Gemm", {{{8, 32}}, {{32, 32}, kParam}, {{32}, kParam}}, {8, 32},
                                  {{"transB", std::int64_t{1}}});
  auto runner = build(net);
  const OpTiming t = time_op(*runner, graph::Mode::kTraining, kMinTime);
  EXPECT_GT(t.mean_s, 0);
  EXPECT_GT(t.calibration_s, 0);
  ASSERT_EQ(t.measurements_s.size(), 5u);
  for (double m : t.measurements_s) EXPECT_GE(m, kMinTime);
}

TEST(OpTimer, InvalidOptionsAreInvalidInput) {
  const Network net = single_node("Relu", {{{2, 3}}}, {2, 3});
  auto runner = build(net);
  EXPECT_THROW(time_op(*runner, graph::Mode::kInference, 0.0), InvalidInput);
  TimingOptions options;
  options.min_time_s = kMinTime;
  options.repeats = 0;
  EXPECT_THROW(time_op(*runner, graph::Mode::kInference, options), InvalidInput);
}

TEST(Proportionality, FitRecoversAKnownLine) {
  const std::vector<std::int64_t> n = {10, 20, 40, 80};
  const std::vector<double> t = {0.003 + 10e-4, 0.003 + 20e-4, 0.003 + 40e-4, 0.003 + 80e-4};
  const ProportionalityFit fit = fit_proportionality(n, t);
  EXPECT_NEAR(fit.slope_s, 1e-4, 1e-12);
  EXPECT_NEAR(fit.intercept_s, 0.003, 1e-12);
  EXPECT_NEAR(fit.r_squared, 1.0, 1e-12);
}

TEST(Proportionality, NoisyPointsLowerRSquared) {
  const std::vector<std::int64_t> n = {1, 2, 3, 4};
  const std::vector<double> t = {1.0, 3.0, 1.0, 3.0};
  EXPECT_LT(fit_proportionality(n, t).r_squared, 0.5);
  EXPECT_THROW(fit_proportionality(std::vector<std::int64_t>{1}, std::vector<double>{1.0}),
               InvalidInput);
  EXPECT_THROW(fit_proportionality(std::vector<std::int64_t>{2, 2}, std::vector<double>{1, 2}),
               InvalidInput);
}

TEST(Proportionality, RealOpIsProportional) {
  const Network net = single_node("Conv", {{{1, 8, 16, 16}}, {{8, 8, 3, 3}, kParam}},
                                  {1, 8, 16, 16}, {{"pads", Ints{1, 1, 1, 1}}});
  auto runner = build(net);
  // Calibrate the counts so that the shortest loop lasts >= 20 ms whatever the machine's speed:
  // long enough that a scheduler time slice lost to another process is a small part of it.
  const OpTiming t = time_op(*runner, graph::Mode::kInference, 2 * kMinTime);
  const std::int64_t unit = std::max<std::int64_t>(1, t.iterations);
  const std::vector<std::int64_t> counts = {unit,     2 * unit, 3 * unit, 4 * unit,
                                            5 * unit, 6 * unit, 7 * unit};
  // Wall-clock loops on a shared machine can be preempted: the best of three fits must show
  // proportionality (a runner whose time did not grow with the count would fail all three).
  ProportionalityFit fit = measure_proportionality(*runner, graph::Mode::kInference, counts, 3);
  for (int attempt = 1; attempt < 3 && fit.r_squared <= 0.9; ++attempt) {
    fit = measure_proportionality(*runner, graph::Mode::kInference, counts, 3);
  }
  std::string points;
  for (std::size_t i = 0; i < fit.iterations.size(); ++i) {
    points +=
        " (" + std::to_string(fit.iterations[i]) + ", " + std::to_string(fit.total_s[i]) + ")";
  }
  EXPECT_GT(fit.r_squared, 0.9) << points;
  EXPECT_GT(fit.slope_s, 0);
  EXPECT_EQ(fit.iterations.size(), 6u);  // 6/7 of 7 points
  EXPECT_EQ(fit.iterations.back(), 7 * unit);
  EXPECT_THROW(measure_proportionality(*runner, graph::Mode::kInference, counts, 0), InvalidInput);
}

TEST(NetworkRunner, ConstantPadTakesItsPaddingFromTheOutputShape) {
  Network net = single_node("Pad",
                            {{{1, 2, 5, 5}, TensorRole::kDataInput},
                             {{8}, TensorRole::kConstant, graph::DataType::kInt64}},
                            {1, 2, 7, 8}, {{"mode", std::string("constant")}});
  net.name = "pad";
  const std::unique_ptr<OpRunner> runner = OpRunner::build_network(net, RunnerOptions{});
  EXPECT_EQ(runner->output_shape(graph::Mode::kInference), (Shape{1, 2, 7, 8}));
  EXPECT_NO_THROW(runner->run(graph::Mode::kInference, 1));

  Network reflect =
      single_node("Pad", {{{1, 2, 5, 5}}, {{8}, TensorRole::kConstant, graph::DataType::kInt64}},
                  {1, 2, 7, 7}, {{"mode", std::string("reflect")}});
  EXPECT_THROW(OpRunner::build_network(reflect, RunnerOptions{}), InvalidInput);
}

}  // namespace
}  // namespace nnergy::profile
