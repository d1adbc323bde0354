#include "nnergy/graph/op_catalog.h"

#include <gtest/gtest.h>

#include "nnergy/core/error.h"
#include "nnergy/graph/onnx_importer.h"
#include "onnx_builder.h"

namespace nnergy::graph {
namespace {

using testing::OnnxBuilder;

// MAC and flop counts are exact integers: compare exactly.
Network import(const OnnxBuilder& b) {
  return import_onnx_bytes(b.bytes(), "t.onnx", DimBindings{});
}

const Node& node_of(const Network& net, const std::string& op) {
  for (const Node& n : net.nodes()) {
    if (n.op_type == op) return n;
  }
  throw InternalError("no " + op);
}

TEST(OpCatalog, GroupedDilatedConv2d) {
  OnnxBuilder b;
  b.input("x", {std::string("N"), 8, 16, 16})
      .input("w", {16, 4, 3, 3})
      .input("bias", {16})
      .output("y");
  auto& conv = b.node("Conv", {"x", "w", "bias"}, {"y"});
  OnnxBuilder::set_int(conv, "group", 2);
  OnnxBuilder::set_ints(conv, "dilations", {2, 2});
  OnnxBuilder::set_ints(conv, "pads", {2, 2, 2, 2});
  OnnxBuilder::set_ints(conv, "kernel_shape", {3, 3});
  const Network net = import(b);
  const OpCost cost = op_cost(net, node_of(net, "Conv"));
  const double out = 1.0 * 16 * 16 * 16;
  EXPECT_EQ(cost.op_class, OpClass::kMatrix);
  EXPECT_DOUBLE_EQ(cost.inference.macs, out * 4 * 9);  // (Cin/groups)·k² per output element
  EXPECT_DOUBLE_EQ(cost.inference.flops, 2 * out * 4 * 9 + out);  // + bias
  EXPECT_DOUBLE_EQ(cost.inference.bytes, 4.0 * (8 * 16 * 16 + 16 * 4 * 9 + 16 + out));
  EXPECT_EQ(cost.parameter_count, 16 * 4 * 9 + 16);
  // The input is a data input: no data-gradient, only weight and bias gradients.
  EXPECT_DOUBLE_EQ(cost.backward.macs, out * 4 * 9);
  EXPECT_DOUBLE_EQ(cost.backward.kernels, 2);
}

TEST(OpCatalog, SecondConvGetsDataAndWeightGradients) {
  OnnxBuilder b;
  b.input("x", {std::string("N"), 3, 8, 8})
      .input("w1", {4, 3, 1, 1})
      .input("w2", {4, 4, 1, 1})
      .output("y");
  b.node("Conv", {"x", "w1"}, {"h"}, "/c1/Conv");
  b.node("Conv", {"h", "w2"}, {"y"}, "/c2/Conv");
  const Network net = import(b);
  const OpCost second = op_cost(net, net.nodes()[1]);
  EXPECT_DOUBLE_EQ(second.backward.macs, 2 * second.inference.macs);  // PALEO: dX + dW
  const OpCost first = op_cost(net, net.nodes()[0]);
  EXPECT_DOUBLE_EQ(first.backward.macs, first.inference.macs);  // dW only
}

TEST(OpCatalog, Conv1d) {
  OnnxBuilder b;
  b.input("x", {std::string("N"), 4, 100}).input("w", {8, 4, 5}).output("y");
  b.node("Conv", {"x", "w"}, {"y"});
  const Network net = import(b);
  EXPECT_DOUBLE_EQ(op_cost(net, net.nodes()[0]).inference.macs, 8.0 * 96 * 4 * 5);
}

TEST(OpCatalog, ConvTransposeCountsPerInputElement) {
  OnnxBuilder b;
  b.input("x", {std::string("N"), 8, 7, 7}).input("w", {8, 4, 2, 2}).output("y");
  OnnxBuilder::set_ints(b.node("ConvTranspose", {"x", "w"}, {"y"}), "strides", {2, 2});
  const Network net = import(b);
  EXPECT_EQ(net.tensor(net.nodes()[0].outputs[0]).shape, (Shape{1, 4, 14, 14}));
  // Each of the 4·14·14 outputs gathers 8 input channels · (2·2 taps / stride²) = 8 products.
  EXPECT_DOUBLE_EQ(op_cost(net, net.nodes()[0]).inference.macs, 4.0 * 14 * 14 * 8);
}

TEST(OpCatalog, GemmWithTransposedWeightAndBias) {
  OnnxBuilder b;
  b.input("a", {std::string("N"), 5}).input("w", {3, 5}).input("c", {3}).output("y");
  OnnxBuilder::set_int(b.node("Gemm", {"a", "w", "c"}, {"y"}), "transB", 1);
  DimBindings bindings;
  bindings.batch = 4;
  const Network net = import_onnx_bytes(b.bytes(), "g.onnx", bindings);
  const OpCost cost = op_cost(net, net.nodes()[0]);
  EXPECT_DOUBLE_EQ(cost.inference.macs, 4.0 * 3 * 5);
  EXPECT_DOUBLE_EQ(cost.inference.flops, 2 * 60.0 + 12);
}

TEST(OpCatalog, BatchedMatMul4d) {
  OnnxBuilder b;
  b.input("q", {std::string("N"), 12, 128, 64})
      .input("k", {std::string("N"), 12, 64, 128})
      .output("s");
  b.node("MatMul", {"q", "k"}, {"s"});
  DimBindings bindings;
  bindings.batch = 2;
  const Network net = import_onnx_bytes(b.bytes(), "m.onnx", bindings);
  const OpCost cost = op_cost(net, net.nodes()[0]);
  EXPECT_DOUBLE_EQ(cost.inference.macs, 2.0 * 12 * 128 * 128 * 64);
  EXPECT_DOUBLE_EQ(cost.backward.macs, 0);  // both inputs are data: nothing needs a gradient
}

TEST(OpCatalog, BatchNormTrainingCostsMoreThanInference) {
  OnnxBuilder b;
  b.input("x", {std::string("N"), 3, 4, 4}).input("w", {8, 3, 1, 1});
  for (const char* p : {"s", "bb", "m", "v"}) b.input(p, {8});
  b.output("y");
  b.node("Conv", {"x", "w"}, {"h"});
  b.node("BatchNormalization", {"h", "s", "bb", "m", "v"}, {"y"});
  const Network net = import(b);
  const OpCost bn = op_cost(net, net.nodes()[1]);
  const double n = 8 * 16;
  EXPECT_EQ(bn.op_class, OpClass::kNormalization);
  EXPECT_DOUBLE_EQ(bn.inference.flops, 2 * n);
  EXPECT_DOUBLE_EQ(bn.training_forward.flops, 5 * n);
  EXPECT_GT(bn.backward.flops, bn.training_forward.flops);
  EXPECT_GT(bn.training_forward.bytes, bn.inference.bytes);
}

TEST(OpCatalog, PoolingWindows) {
  OnnxBuilder b;
  b.input("x", {std::string("N"), 2, 8, 8}).output("y").output("g");
  auto& pool = b.node("MaxPool", {"x"}, {"y"});
  OnnxBuilder::set_ints(pool, "kernel_shape", {2, 2});
  OnnxBuilder::set_ints(pool, "strides", {2, 2});
  b.node("GlobalAveragePool", {"x"}, {"g"});
  const Network net = import(b);
  EXPECT_DOUBLE_EQ(op_cost(net, net.nodes()[0]).inference.flops, 2.0 * 4 * 4 * 4);
  EXPECT_DOUBLE_EQ(op_cost(net, net.nodes()[1]).inference.flops, 2.0 * 8 * 8);
}

TEST(OpCatalog, ViewsCostNothingAndCopiesMoveBytes) {
  OnnxBuilder b;
  b.input("x", {std::string("N"), 2, 3, 4}).output("f").output("t");
  b.node("Flatten", {"x"}, {"f"});
  OnnxBuilder::set_ints(b.node("Transpose", {"x"}, {"t"}), "perm", {0, 3, 1, 2});
  const Network net = import(b);
  const OpCost flatten = op_cost(net, net.nodes()[0]);
  EXPECT_EQ(flatten.op_class, OpClass::kView);
  EXPECT_TRUE(flatten.inference.empty());
  const OpCost transpose = op_cost(net, net.nodes()[1]);
  EXPECT_EQ(transpose.op_class, OpClass::kDataMovement);
  EXPECT_DOUBLE_EQ(transpose.inference.flops, 0);
  EXPECT_DOUBLE_EQ(transpose.inference.bytes, 2 * 24 * 4.0);
}

TEST(OpCatalog, UnknownOperatorUsesMemoryBoundFallback) {
  OnnxBuilder b;
  b.input("x", {std::string("N"), 10}).output("y");
  b.node("Hardmax", {"x"}, {"y"});
  const Network net = import(b);
  const OpCost cost = op_cost(net, net.nodes()[0]);
  EXPECT_FALSE(cost.known);
  EXPECT_EQ(cost.op_class, OpClass::kUnknown);
  EXPECT_DOUBLE_EQ(cost.inference.flops, 10);
  EXPECT_DOUBLE_EQ(cost.inference.bytes, 80);
  EXPECT_DOUBLE_EQ(cost.inference.kernels, 1);
  EXPECT_FALSE(is_known_op("Hardmax"));
  EXPECT_TRUE(is_known_op("Conv"));
}

TEST(OpCatalog, OptimizerStepCosts) {
  // SGD with momentum: 4 flops and 5 tensors of 4 bytes per parameter; 2 foreach stages.
  const PassCost sgd = optimizer_step_cost(Optimizer::kSgdMomentum, 1000, 130, 4);
  EXPECT_DOUBLE_EQ(sgd.flops, 4000);
  EXPECT_DOUBLE_EQ(sgd.bytes, 20000);
  EXPECT_DOUBLE_EQ(sgd.kernels, 3 * 2);  // ceil(130 / 64) launches per stage
  const PassCost adam = optimizer_step_cost(Optimizer::kAdam, 1000, 10, 4);
  EXPECT_DOUBLE_EQ(adam.bytes, 28000);
  EXPECT_EQ(parse_optimizer("adamw", "--optimizer"), Optimizer::kAdamW);
  EXPECT_THROW(parse_optimizer("lion", "--optimizer"), InvalidInput);
}

}  // namespace
}  // namespace nnergy::graph
