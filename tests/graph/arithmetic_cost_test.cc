#include <gtest/gtest.h>

#include <string>

#include "nnergy/graph/op_catalog.h"
#include "tiny_network.h"

namespace nnergy::graph {
namespace {

using testing::TinyNetwork;

// Backward passes as PyTorch autograd launches them. Exact integers: compare exactly.

// `op` over a [4, 8] parameter and a parameter of shape `second`; both need a gradient.
OpCost binary(const std::string& op, const Shape& second) {
  TinyNetwork t;
  const std::size_t a = t.tensor("a", {4, 8}, TensorRole::kParameter);
  const std::size_t b = t.tensor("b", second, TensorRole::kParameter);
  const std::size_t y = t.tensor("y", {4, 8});
  t.node(op, {a, b}, {y});
  const Network net = t.done();
  return op_cost(net, net.nodes()[0]);
}

// `op` over a [4, 8] parameter.
OpCost unary(const std::string& op) {
  TinyNetwork t;
  const std::size_t a = t.tensor("a", {4, 8}, TensorRole::kParameter);
  const std::size_t y = t.tensor("y", {4, 8});
  t.node(op, {a}, {y});
  const Network net = t.done();
  return op_cost(net, net.nodes()[0]);
}

constexpr double kElements = 32;  // [4, 8]
constexpr double kBytes = 4 * kElements;

TEST(ArithmeticCost, AddOfSameShapesPassesTheGradientThroughWithoutAKernel) {
  const OpCost add = binary("Add", {4, 8});
  EXPECT_DOUBLE_EQ(add.inference.flop_count, kElements);
  EXPECT_DOUBLE_EQ(add.inference.kernel_count, 1);
  EXPECT_TRUE(add.backward.empty());  // AddBackward returns the incoming gradient
}

TEST(ArithmeticCost, BroadcastAddendCostsOneReduction) {
  const OpCost add = binary("Add", {8});
  // sum over axis 0: reads the [4, 8] gradient, writes the [8] one.
  EXPECT_DOUBLE_EQ(add.backward.kernel_count, 1);
  EXPECT_DOUBLE_EQ(add.backward.flop_count, kElements);
  EXPECT_DOUBLE_EQ(add.backward.byte_count, kBytes + 8 * 4);
}

TEST(ArithmeticCost, SubNegatesTheSecondGradientInOneKernel) {
  const OpCost sub = binary("Sub", {4, 8});
  EXPECT_DOUBLE_EQ(sub.backward.kernel_count, 1);
  EXPECT_DOUBLE_EQ(sub.backward.flop_count, kElements);
  EXPECT_DOUBLE_EQ(sub.backward.byte_count, 2 * kBytes);
  // Broadcast subtrahend: negation over the output shape, then the reduction.
  EXPECT_DOUBLE_EQ(binary("Sub", {1, 8}).backward.kernel_count, 2);
}

TEST(ArithmeticCost, MulLaunchesOneKernelPerInputPlusABroadcastReduction) {
  const OpCost same = binary("Mul", {4, 8});
  EXPECT_DOUBLE_EQ(same.backward.kernel_count, 2);
  // dA = dY·B reads dY and B and writes dA; dB likewise.
  EXPECT_DOUBLE_EQ(same.backward.byte_count, 2 * 3 * kBytes);
  const OpCost scaled = binary("Mul", {8});
  EXPECT_DOUBLE_EQ(scaled.backward.kernel_count, 3);
  EXPECT_DOUBLE_EQ(scaled.backward.flop_count, 3 * kElements);
}

TEST(ArithmeticCost, DivisorGradientTakesFourKernels) {
  EXPECT_DOUBLE_EQ(binary("Div", {4, 8}).backward.kernel_count, 1 + 4);
}

TEST(ArithmeticCost, NegAndReluBackwardAreOneKernel) {
  EXPECT_DOUBLE_EQ(unary("Neg").backward.kernel_count, 1);
  const OpCost relu = unary("Relu");
  EXPECT_DOUBLE_EQ(relu.backward.kernel_count, 1);  // threshold_backward
  EXPECT_DOUBLE_EQ(relu.backward.flop_count, kElements);
}

}  // namespace
}  // namespace nnergy::graph
