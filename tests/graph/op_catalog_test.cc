#include "nnergy/graph/op_catalog.h"

#include <gtest/gtest.h>

#include "nnergy/core/error.h"
#include "nnergy/graph/onnx_importer.h"
#include "onnx_builder.h"
#include "tiny_network.h"

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
  EXPECT_DOUBLE_EQ(cost.inference.mac_count, out * 4 * 9);  // (Cin/groups)·k² per output element
  EXPECT_DOUBLE_EQ(cost.inference.flop_count, 2 * out * 4 * 9 + out);  // + bias
  EXPECT_DOUBLE_EQ(cost.inference.byte_count, 4.0 * (8 * 16 * 16 + 16 * 4 * 9 + 16 + out));
  EXPECT_EQ(cost.parameter_count, 16 * 4 * 9 + 16);
  // The input is a data input: no data-gradient, only weight and bias gradients.
  EXPECT_DOUBLE_EQ(cost.backward.mac_count, out * 4 * 9);
  EXPECT_DOUBLE_EQ(cost.backward.kernel_count, 2);
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
  EXPECT_DOUBLE_EQ(second.backward.mac_count, 2 * second.inference.mac_count);  // PALEO: dX + dW
  const OpCost first = op_cost(net, net.nodes()[0]);
  EXPECT_DOUBLE_EQ(first.backward.mac_count, first.inference.mac_count);  // dW only
}

TEST(OpCatalog, Conv1d) {
  OnnxBuilder b;
  b.input("x", {std::string("N"), 4, 100}).input("w", {8, 4, 5}).output("y");
  b.node("Conv", {"x", "w"}, {"y"});
  const Network net = import(b);
  EXPECT_DOUBLE_EQ(op_cost(net, net.nodes()[0]).inference.mac_count, 8.0 * 96 * 4 * 5);
}

TEST(OpCatalog, ConvTransposeCountsPerInputElement) {
  OnnxBuilder b;
  b.input("x", {std::string("N"), 8, 7, 7}).input("w", {8, 4, 2, 2}).output("y");
  OnnxBuilder::set_ints(b.node("ConvTranspose", {"x", "w"}, {"y"}), "strides", {2, 2});
  const Network net = import(b);
  EXPECT_EQ(net.tensor(net.nodes()[0].outputs[0]).shape, (Shape{1, 4, 14, 14}));
  // Each of the 4·14·14 outputs gathers 8 input channels · (2·2 taps / stride²) = 8 products.
  EXPECT_DOUBLE_EQ(op_cost(net, net.nodes()[0]).inference.mac_count, 4.0 * 14 * 14 * 8);
}

TEST(OpCatalog, GemmWithTransposedWeightAndBias) {
  OnnxBuilder b;
  b.input("a", {std::string("N"), 5}).input("w", {3, 5}).input("c", {3}).output("y");
  OnnxBuilder::set_int(b.node("Gemm", {"a", "w", "c"}, {"y"}), "transB", 1);
  DimBindings bindings;
  bindings.batch = 4;
  const Network net = import_onnx_bytes(b.bytes(), "g.onnx", bindings);
  const OpCost cost = op_cost(net, net.nodes()[0]);
  EXPECT_DOUBLE_EQ(cost.inference.mac_count, 4.0 * 3 * 5);
  EXPECT_DOUBLE_EQ(cost.inference.flop_count, 2 * 60.0 + 12);
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
  EXPECT_DOUBLE_EQ(cost.inference.mac_count, 2.0 * 12 * 128 * 128 * 64);
  EXPECT_DOUBLE_EQ(cost.backward.mac_count, 0);  // both inputs are data: nothing needs a gradient
  // As a batched GEMM: 2 × 12 products of 128 × 64 by 64 × 128.
  ASSERT_EQ(cost.forward_gemms.size(), 1u);
  EXPECT_EQ(cost.forward_gemms[0], (GemmDims{128, 128, 64, 24}));
  EXPECT_TRUE(cost.backward_gemms.empty());
}

TEST(OpCatalog, MatrixOperatorsRunAsTheGemmsTheLibrariesCall) {
  // A Linear layer on [N, 7, 5] tokens: the batch folds into the rows (14 × 3 by 5); its
  // weight's gradient is 5 × 14 by 14 × 3.
  {
    OnnxBuilder b;
    b.input("x", {std::string("N"), 7, 5}).input("w", {5, 3}).output("y");
    b.node("MatMul", {"x", "w"}, {"y"});
    DimBindings bindings;
    bindings.batch = 2;
    const Network net = import_onnx_bytes(b.bytes(), "l.onnx", bindings);
    const OpCost cost = op_cost(net, net.nodes()[0]);
    ASSERT_EQ(cost.forward_gemms.size(), 1u);
    EXPECT_EQ(cost.forward_gemms[0], (GemmDims{14, 3, 5, 1}));
    ASSERT_EQ(cost.backward_gemms.size(), 1u);
    EXPECT_EQ(cost.backward_gemms[0], (GemmDims{5, 3, 14, 1}));
  }
  // A grouped convolution as an implicit GEMM per group: 16 × 16 positions × 8 output channels
  // of a group, reducing over 4 input channels × 9 taps, 2 groups.
  {
    OnnxBuilder b;
    b.input("x", {std::string("N"), 8, 16, 16}).input("w", {16, 4, 3, 3}).output("y");
    auto& conv = b.node("Conv", {"x", "w"}, {"y"});
    OnnxBuilder::set_int(conv, "group", 2);
    OnnxBuilder::set_ints(conv, "pads", {1, 1, 1, 1});
    const Network net = import(b);
    const OpCost cost = op_cost(net, net.nodes()[0]);
    ASSERT_EQ(cost.forward_gemms.size(), 1u);
    EXPECT_EQ(cost.forward_gemms[0], (GemmDims{256, 8, 36, 2, true}));
  }
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
  EXPECT_DOUBLE_EQ(bn.inference.flop_count, 2 * n);
  EXPECT_DOUBLE_EQ(bn.training_forward.flop_count, 5 * n);
  EXPECT_GT(bn.backward.flop_count, bn.training_forward.flop_count);
  EXPECT_GT(bn.training_forward.byte_count, bn.inference.byte_count);
  // Statistics in training only: inference folds the running ones into one affine.
  EXPECT_EQ(bn.statistics, StatisticsPasses::kTraining);
  EXPECT_EQ(op_cost(net, net.nodes()[0]).statistics, StatisticsPasses::kNone);
}

TEST(OpCatalog, PoolingWindows) {
  OnnxBuilder b;
  b.input("x", {std::string("N"), 2, 8, 8}).output("y").output("g");
  auto& pool = b.node("MaxPool", {"x"}, {"y"});
  OnnxBuilder::set_ints(pool, "kernel_shape", {2, 2});
  OnnxBuilder::set_ints(pool, "strides", {2, 2});
  b.node("GlobalAveragePool", {"x"}, {"g"});
  const Network net = import(b);
  EXPECT_DOUBLE_EQ(op_cost(net, net.nodes()[0]).inference.flop_count, 2.0 * 4 * 4 * 4);
  EXPECT_DOUBLE_EQ(op_cost(net, net.nodes()[1]).inference.flop_count, 2.0 * 8 * 8);
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
  EXPECT_DOUBLE_EQ(transpose.inference.flop_count, 0);
  EXPECT_DOUBLE_EQ(transpose.inference.byte_count, 2 * 24 * 4.0);
}

TEST(OpCatalog, UnknownOperatorUsesMemoryBoundFallback) {
  OnnxBuilder b;
  b.input("x", {std::string("N"), 10, 10}).output("y");
  b.node("Det", {"x"}, {"y"});
  const Network net = import(b);
  const OpCost cost = op_cost(net, net.nodes()[0]);
  EXPECT_FALSE(cost.known);
  EXPECT_EQ(cost.op_class, OpClass::kUnknown);
  EXPECT_DOUBLE_EQ(cost.inference.flop_count, 1);  // one flop per output element
  EXPECT_DOUBLE_EQ(cost.inference.byte_count, 4.0 * (100 + 1));
  EXPECT_DOUBLE_EQ(cost.inference.kernel_count, 1);
  EXPECT_FALSE(is_known_op("Det"));
  EXPECT_TRUE(is_known_op("Conv"));
}

TEST(OpCatalog, OperatorsOfRealExportsAreKnown) {
  for (const char* op : {"LSTM",
                         "GRU",
                         "RNN",
                         "Einsum",
                         "InstanceNormalization",
                         "GroupNormalization",
                         "LpNormalization",
                         "ReduceL1",
                         "ReduceLogSumExp",
                         "ReduceSumSquare",
                         "ArgMax",
                         "ArgMin",
                         "TopK",
                         "NonZero",
                         "OneHot",
                         "Mod",
                         "GreaterOrEqual",
                         "LessOrEqual",
                         "Xor",
                         "Softsign",
                         "ThresholdedRelu",
                         "Shrink",
                         "Hardmax",
                         "CastLike",
                         "Atan",
                         "Asin",
                         "Acos",
                         "Tan",
                         "Sinh",
                         "Cosh",
                         "Asinh",
                         "Acosh",
                         "Atanh",
                         "GridSample",
                         "LpPool",
                         "GlobalLpPool",
                         "ReverseSequence",
                         "Compress",
                         "Scatter",
                         "RoiAlign",
                         "MaxUnpool",
                         "DequantizeLinear",
                         "QuantizeLinear",
                         "BitShift",
                         "Resize",
                         "Upsample"}) {
    EXPECT_TRUE(is_known_op(op)) << op;
  }
}

TEST(OpCatalog, Conv3d) {
  OnnxBuilder b;
  b.input("x", {std::string("N"), 4, 6, 6, 6}).input("w", {8, 4, 3, 3, 3}).output("y");
  b.node("Conv", {"x", "w"}, {"y"});
  const Network net = import(b);
  EXPECT_EQ(net.tensor(net.nodes()[0].outputs[0]).shape, (Shape{1, 8, 4, 4, 4}));
  // 8·4³ outputs, each Cin·k³ = 4·27 products.
  EXPECT_DOUBLE_EQ(op_cost(net, net.nodes()[0]).inference.mac_count, 8.0 * 64 * 4 * 27);
}

TEST(OpCatalog, DepthwiseConv2d) {
  OnnxBuilder b;
  b.input("x", {std::string("N"), 8, 10, 10}).input("w", {8, 1, 3, 3}).output("y");
  auto& conv = b.node("Conv", {"x", "w"}, {"y"});
  OnnxBuilder::set_int(conv, "group", 8);
  OnnxBuilder::set_ints(conv, "pads", {1, 1, 1, 1});
  const Network net = import(b);
  // Cin/groups = 1: each of the 8·10·10 outputs is a 3×3 window of its own channel.
  EXPECT_DOUBLE_EQ(op_cost(net, net.nodes()[0]).inference.mac_count, 8.0 * 100 * 9);
}

// The kernel family a convolution runs as: dense 3×3 stride 1 (Winograd-eligible), grouped with
// 4 or more groups, or a GEMM (1×1, strided, dilated, two groups, depthwise, other kernels).
MatrixKind kind_of_conv(const std::vector<std::int64_t>& w, std::int64_t group, std::int64_t stride,
                        std::int64_t dilation = 1) {
  OnnxBuilder b;
  b.input("x", {std::string("N"), w[1] * group, 16, 16})
      .input("w", {w[0], w[1], w[2], w[3]})
      .output("y");
  auto& conv = b.node("Conv", {"x", "w"}, {"y"});
  OnnxBuilder::set_int(conv, "group", group);
  OnnxBuilder::set_ints(conv, "strides", {stride, stride});
  OnnxBuilder::set_ints(conv, "dilations", {dilation, dilation});
  const Network net = import(b);
  return op_cost(net, net.nodes()[0]).matrix_kind;
}

TEST(OpCatalog, ConvolutionKinds) {
  EXPECT_EQ(kind_of_conv({16, 8, 3, 3}, 1, 1), MatrixKind::kConv3x3);
  EXPECT_EQ(kind_of_conv({16, 8, 3, 3}, 1, 2), MatrixKind::kGemm);     // strided
  EXPECT_EQ(kind_of_conv({16, 8, 3, 3}, 1, 1, 2), MatrixKind::kGemm);  // dilated
  EXPECT_EQ(kind_of_conv({16, 8, 1, 1}, 1, 1), MatrixKind::kGemm);
  EXPECT_EQ(kind_of_conv({16, 8, 5, 5}, 1, 1), MatrixKind::kGemm);
  EXPECT_EQ(kind_of_conv({16, 4, 3, 3}, 2, 1), MatrixKind::kGemm);  // two towers: dense
  EXPECT_EQ(kind_of_conv({32, 4, 3, 3}, 8, 1), MatrixKind::kGroupedConv);
  EXPECT_EQ(kind_of_conv({32, 4, 3, 3}, 8, 2), MatrixKind::kGroupedConv);
  EXPECT_EQ(kind_of_conv({8, 1, 3, 3}, 8, 1), MatrixKind::kGemm);  // depthwise
  EXPECT_EQ(to_string(MatrixKind::kGroupedConv), "grouped-conv");
}

TEST(OpCatalog, ConvTranspose1d) {
  OnnxBuilder b;
  b.input("x", {std::string("N"), 4, 10}).input("w", {4, 6, 3}).output("y");
  b.node("ConvTranspose", {"x", "w"}, {"y"});
  const Network net = import(b);
  EXPECT_EQ(net.tensor(net.nodes()[0].outputs[0]).shape, (Shape{1, 6, 12}));
  // Every input element is scattered onto Cout·k = 6·3 outputs.
  EXPECT_DOUBLE_EQ(op_cost(net, net.nodes()[0]).inference.mac_count, 4.0 * 10 * 6 * 3);
}

TEST(OpCatalog, GroupedConvTranspose3d) {
  OnnxBuilder b;
  b.input("x", {std::string("N"), 4, 3, 3, 3}).input("w", {4, 2, 2, 2, 2}).output("y");
  auto& deconv = b.node("ConvTranspose", {"x", "w"}, {"y"});
  OnnxBuilder::set_int(deconv, "group", 2);
  OnnxBuilder::set_ints(deconv, "strides", {2, 2, 2});
  const Network net = import(b);
  EXPECT_EQ(net.tensor(net.nodes()[0].outputs[0]).shape, (Shape{1, 4, 6, 6, 6}));
  // Input elements × (Cout/groups)·k³ = 108 · 2·8; seen from the output, each of the 4·6³
  // outputs gathers Cin/groups = 2 channels × one tap (8 taps / stride³).
  const double macs = op_cost(net, net.nodes()[0]).inference.mac_count;
  EXPECT_DOUBLE_EQ(macs, 4.0 * 27 * 2 * 8);
  EXPECT_DOUBLE_EQ(macs, 4.0 * 216 * 2 * 1);
}

// Resize of [1, 2, 4, 4] to [1, 2, 8, 8] in `mode`.
OpCost resize(const std::string& mode) {
  OnnxBuilder b;
  b.input("x", {std::string("N"), 2, 4, 4}).int64_initializer("sizes", {1, 2, 8, 8}).output("y");
  OnnxBuilder::set_string(b.node("Resize", {"x", "", "", "sizes"}, {"y"}), "mode", mode);
  const Network net = import(b);
  return op_cost(net, net.nodes()[0]);
}

TEST(OpCatalog, ResizeInterpolationFlops) {
  const double n_out = 2 * 8 * 8;
  const OpCost nearest = resize("nearest");
  EXPECT_EQ(nearest.op_class, OpClass::kDataMovement);
  EXPECT_DOUBLE_EQ(nearest.inference.flop_count, 0);
  EXPECT_DOUBLE_EQ(nearest.inference.byte_count, 4.0 * (2 * 16 + n_out));
  // Two resized axes: 2² taps for linear, 4² for cubic; a weighted sum is 2·taps − 1 flops.
  EXPECT_DOUBLE_EQ(resize("linear").inference.flop_count, (2 * 4 - 1) * n_out);
  EXPECT_DOUBLE_EQ(resize("cubic").inference.flop_count, (2 * 16 - 1) * n_out);
  EXPECT_THROW(resize("area"), InvalidInput);
}

TEST(OpCatalog, NormalizationsReductionsAndSelections) {
  OnnxBuilder b;
  b.input("x", {std::string("N"), 3, 4, 4}).input("s", {3}).input("t", {3});
  b.input("v", {std::string("N"), 100}).int64_initializer("k", {5});
  b.metadata("nnergy.data_inputs", "x,v");
  for (const char* out : {"in", "l1", "tv", "ss", "lp"}) b.output(out);
  b.output("am", onnx::TensorProto_DataType_INT64).output("ti", onnx::TensorProto_DataType_INT64);
  b.node("InstanceNormalization", {"x", "s", "t"}, {"in"});
  b.node("ReduceL1", {"x"}, {"l1"});
  b.node("ArgMax", {"v"}, {"am"});
  b.node("TopK", {"v", "k"}, {"tv", "ti"});
  b.node("Softsign", {"v"}, {"ss"});
  auto& lp = b.node("LpPool", {"x"}, {"lp"});
  OnnxBuilder::set_ints(lp, "kernel_shape", {2, 2});
  OnnxBuilder::set_ints(lp, "strides", {2, 2});
  const Network net = import(b);
  const OpCost instance = op_cost(net, net.nodes()[0]);
  EXPECT_EQ(instance.op_class, OpClass::kNormalization);
  EXPECT_EQ(instance.statistics, StatisticsPasses::kAll);
  EXPECT_DOUBLE_EQ(instance.inference.flop_count, 5 * 48.0);  // batch statistics + normalize
  EXPECT_DOUBLE_EQ(instance.inference.kernel_count, 2 + 2);   // + repeat of scale and bias
  EXPECT_DOUBLE_EQ(op_cost(net, net.nodes()[1]).inference.flop_count, 2 * 48.0);  // |x| and +
  const OpCost argmax = op_cost(net, net.nodes()[2]);
  EXPECT_DOUBLE_EQ(argmax.inference.flop_count, 100);
  EXPECT_TRUE(argmax.backward.empty());
  const OpCost top_k = op_cost(net, net.nodes()[3]);
  EXPECT_DOUBLE_EQ(top_k.inference.flop_count, 4 * 100.0);  // four 8-bit digits of a float
  EXPECT_DOUBLE_EQ(top_k.inference.kernel_count, 4 + 2);    // + gather and sort of the 5
  EXPECT_DOUBLE_EQ(op_cost(net, net.nodes()[4]).inference.flop_count, 3 * 100.0);
  EXPECT_DOUBLE_EQ(op_cost(net, net.nodes()[5]).inference.flop_count, 3 * 2 * 2 * 4 * 2.0);
}

TEST(OpCatalog, GroupNormalizationOfOpset18) {
  // Built directly: the installed ONNX release cannot infer opset-18 shapes.
  testing::TinyNetwork t;
  const std::size_t x = t.tensor("x", {2, 8, 4, 4}, TensorRole::kParameter);
  const std::size_t s = t.tensor("s", {2}, TensorRole::kParameter);
  const std::size_t bias = t.tensor("b", {2}, TensorRole::kParameter);
  const std::size_t y = t.tensor("y", {2, 8, 4, 4});
  t.node("GroupNormalization", {x, s, bias}, {y}, {{"num_groups", std::int64_t{2}}});
  const Network net = t.done();
  const OpCost cost = op_cost(net, net.nodes()[0]);
  EXPECT_EQ(cost.op_class, OpClass::kNormalization);
  EXPECT_DOUBLE_EQ(cost.inference.flop_count, 5 * 256.0);  // moments 3, a·x + b 2
  EXPECT_DOUBLE_EQ(cost.inference.kernel_count, 3);
  EXPECT_DOUBLE_EQ(cost.backward.kernel_count, 3 + 1);  // dX, then scale and bias
  EXPECT_EQ(cost.statistics, StatisticsPasses::kAll);
}

TEST(OpCatalog, OptimizerStepCosts) {
  // SGD with momentum: 4 flops and 5 tensors of 4 bytes per parameter; 2 foreach stages.
  const PassCost sgd = optimizer_step_cost(Optimizer::kSgdMomentum, 1000, 130, 4);
  EXPECT_DOUBLE_EQ(sgd.flop_count, 4000);
  EXPECT_DOUBLE_EQ(sgd.byte_count, 20000);
  EXPECT_DOUBLE_EQ(sgd.kernel_count, 3 * 2);  // ceil(130 / 64) launches per stage
  const PassCost adam = optimizer_step_cost(Optimizer::kAdam, 1000, 10, 4);
  EXPECT_DOUBLE_EQ(adam.byte_count, 28000);
  EXPECT_EQ(parse_optimizer("adamw", "--optimizer"), Optimizer::kAdamW);
  EXPECT_THROW(parse_optimizer("lion", "--optimizer"), InvalidInput);
}

}  // namespace
}  // namespace nnergy::graph
