// Runtimes: compiled fusion of pointwise chains (closed-form bytes and kernels on a small
// network), the launch share per runtime, and the names.
#include "nnergy/network/runtime.h"

#include <gtest/gtest.h>

#include "nnergy/core/error.h"
#include "nnergy/graph/op_catalog.h"
#include "nnergy/network/network_prediction.h"
#include "tiny_network.h"

namespace nnergy::network {
namespace {

using graph::Network;
using graph::TensorRole;

// x → MatMul(w) → Add(b) → Relu → Mul(s) → Softmax. The bias Add follows a matrix operator and
// keeps its own kernel (cuBLAS runs no epilogue of Inductor's); Relu and Mul join the Add's
// kernel; the Softmax takes the Mul's output as a prologue, without it written to memory.
Network chain() {
  graph::testing::TinyNetwork net;
  const auto x = net.tensor("x", {64, 1024}, TensorRole::kDataInput);
  const auto w = net.tensor("w", {1024, 1024}, TensorRole::kParameter);
  const auto b = net.tensor("b", {1024}, TensorRole::kParameter);
  const auto s = net.tensor("s", {1024}, TensorRole::kParameter);
  const auto h = net.tensor("h", {64, 1024});
  const auto a = net.tensor("a", {64, 1024});
  const auto r = net.tensor("r", {64, 1024});
  const auto m = net.tensor("m", {64, 1024});
  const auto y = net.tensor("y", {64, 1024});
  net.node("MatMul", {x, w}, {h})
      .node("Add", {h, b}, {a})
      .node("Relu", {a}, {r})
      .node("Mul", {r, s}, {m})
      .node("Softmax", {m}, {y});
  return net.done();
}

double total(const CostedNetwork& c, double graph::PassCost::*field) {
  double sum = 0;
  for (const graph::OpCost& cost : c.costs()) sum += cost.inference.*field;
  return sum;
}

TEST(CompiledFusion, PointwiseChainsRunAsOneKernelWithoutTheirIntermediates) {
  const Network net = chain();
  const CostedNetwork eager(net, Runtime::kEager);
  const CostedNetwork compiled(net, Runtime::kCompiled);
  const double intermediate = 64.0 * 1024 * 4;  // fp32
  EXPECT_EQ(compiled.fusion().fused_nodes, 2u);
  EXPECT_DOUBLE_EQ(total(eager, &graph::PassCost::kernel_count) -
                       total(compiled, &graph::PassCost::kernel_count),
                   2);
  // Three intermediates (a, r, m) are neither written nor read back.
  EXPECT_DOUBLE_EQ(
      total(eager, &graph::PassCost::byte_count) - total(compiled, &graph::PassCost::byte_count),
      3 * 2 * intermediate);
  EXPECT_DOUBLE_EQ(compiled.fusion().bytes_removed, 3 * 2 * intermediate);
  // The matrix operator keeps its kernel and traffic.
  EXPECT_EQ(compiled.costs()[0].inference, eager.costs()[0].inference);
  // Flops are not changed by fusion.
  EXPECT_DOUBLE_EQ(total(eager, &graph::PassCost::flop_count),
                   total(compiled, &graph::PassCost::flop_count));
}

TEST(CompiledFusion, ATensorReadTwiceIsWrittenAndStaysUnfused) {
  graph::testing::TinyNetwork b;
  const auto x = b.tensor("x", {64, 1024}, TensorRole::kDataInput);
  const auto a = b.tensor("a", {64, 1024});
  const auto r = b.tensor("r", {64, 1024});
  const auto y = b.tensor("y", {64, 1024});
  b.node("Relu", {x}, {a}).node("Sigmoid", {a}, {r}).node("Add", {a, r}, {y});  // a: two readers
  const Network net = b.done();
  const CostedNetwork compiled(net, Runtime::kCompiled);
  // Sigmoid reads a (two readers: not fused); Add reads r (one reader: fused into Sigmoid).
  EXPECT_EQ(compiled.fusion().fused_nodes, 1u);
  EXPECT_DOUBLE_EQ(compiled.fusion().bytes_removed, 2 * 64.0 * 1024 * 4);
}

TEST(CompiledFusion, EagerAndCudaGraphsKeepEveryKernel) {
  const Network net = chain();
  for (const Runtime r : {Runtime::kEager, Runtime::kCudaGraphs}) {
    const CostedNetwork costed(net, r);
    EXPECT_EQ(costed.fusion().fused_nodes, 0u);
    EXPECT_EQ(costed.unique_count(), CostedNetwork(net).unique_count());
  }
}

TEST(Runtime, LaunchSharesAndNames) {
  EXPECT_EQ(launch_share(Runtime::kEager), 1);
  EXPECT_EQ(launch_share(Runtime::kCudaGraphs), 0);
  EXPECT_GT(launch_share(Runtime::kCompiled), 0);
  EXPECT_LT(launch_share(Runtime::kCompiled), 1);
  for (const Runtime r : {Runtime::kEager, Runtime::kCudaGraphs, Runtime::kCompiled})
    EXPECT_EQ(parse_runtime(to_string(r), "--runtime"), r);
  try {
    parse_runtime("jit", "--runtime");
    FAIL();
  } catch (const InvalidInput& e) {
    EXPECT_NE(std::string(e.what()).find("--runtime jit"), std::string::npos);
  }
}

}  // namespace
}  // namespace nnergy::network
