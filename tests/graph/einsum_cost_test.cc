#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "nnergy/core/error.h"
#include "nnergy/graph/onnx_importer.h"
#include "nnergy/graph/op_catalog.h"
#include "onnx_builder.h"
#include "tiny_network.h"

namespace nnergy::graph {
namespace {

using testing::OnnxBuilder;
using testing::TinyNetwork;

// MAC and flop counts are exact integers: compare exactly.

// One Einsum node over parameters of `shapes` (so every operand needs a gradient).
OpCost einsum(const std::string& equation, const std::vector<Shape>& shapes, const Shape& out) {
  TinyNetwork t;
  std::vector<std::size_t> inputs;
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    inputs.push_back(t.tensor("in" + std::to_string(i), shapes[i], TensorRole::kParameter));
  }
  const std::size_t y = t.tensor("y", out);
  t.node("Einsum", inputs, {y}, {{"equation", equation}});
  const Network net = t.done();
  return op_cost(net, net.nodes()[0]);
}

TEST(EinsumCost, BatchedMatMulThroughTheImporter) {
  OnnxBuilder b;
  // ONNX 1.12 infers only the rank of an Einsum output: the export declares its shape.
  b.input("q", {std::string("N"), 3, 4}).input("k", {std::string("N"), 4, 5});
  b.shaped_output("s", {std::string("N"), 3, 5});
  OnnxBuilder::set_string(b.node("Einsum", {"q", "k"}, {"s"}), "equation", "bij,bjk->bik");
  DimBindings bindings;
  bindings.batch = 2;
  const Network net = import_onnx_bytes(b.bytes(), "e.onnx", bindings);
  const OpCost cost = op_cost(net, net.nodes()[0]);
  EXPECT_TRUE(cost.known);
  EXPECT_EQ(cost.op_class, OpClass::kMatrix);
  EXPECT_DOUBLE_EQ(cost.inference.mac_count, 2.0 * 3 * 4 * 5);  // b·i·j·k
  EXPECT_DOUBLE_EQ(cost.inference.flop_count, 2 * 2.0 * 3 * 4 * 5);
  EXPECT_DOUBLE_EQ(cost.inference.byte_count, 4.0 * (2 * 3 * 4 + 2 * 4 * 5 + 2 * 3 * 5));
  EXPECT_DOUBLE_EQ(cost.backward.mac_count, 0);  // both operands are data
}

TEST(EinsumCost, BackwardIsOneContractionPerOperandNeedingAGradient) {
  const OpCost cost = einsum("ij,jk->ik", {{6, 7}, {7, 8}}, {6, 8});
  EXPECT_DOUBLE_EQ(cost.inference.mac_count, 6.0 * 7 * 8);
  EXPECT_DOUBLE_EQ(cost.backward.mac_count, 2 * 6.0 * 7 * 8);
  EXPECT_DOUBLE_EQ(cost.backward.kernel_count, 2);
}

TEST(EinsumCost, ImplicitOutputAndEllipsis) {
  // Implicit output "ik"; j is summed.
  EXPECT_DOUBLE_EQ(einsum("ij,jk", {{6, 7}, {7, 8}}, {6, 8}).inference.mac_count, 6.0 * 7 * 8);
  // "..." covers [2, 3] and broadcasts a leading 1 of the second operand.
  const OpCost cost = einsum("...ij,...jk->...ik", {{2, 3, 4, 5}, {1, 3, 5, 6}}, {2, 3, 4, 6});
  EXPECT_EQ(cost.op_class, OpClass::kMatrix);
  EXPECT_DOUBLE_EQ(cost.inference.mac_count, 2.0 * 3 * 4 * 5 * 6);
  // Spaces are allowed and "..." may cover no dimension at all.
  EXPECT_DOUBLE_EQ(einsum(" ...i , ...i -> ... ", {{4}, {4}}, {}).inference.mac_count, 4);
}

TEST(EinsumCost, OneOperandIsDataMovementOverTheInput) {
  const OpCost trace = einsum("ii->", {{5, 5}}, {});
  EXPECT_EQ(trace.op_class, OpClass::kDataMovement);
  EXPECT_DOUBLE_EQ(trace.inference.mac_count, 0);
  EXPECT_DOUBLE_EQ(trace.inference.flop_count, 25);
  const OpCost transpose = einsum("abc->cab", {{2, 3, 4}}, {4, 2, 3});
  EXPECT_DOUBLE_EQ(transpose.inference.flop_count, 24);
  EXPECT_DOUBLE_EQ(transpose.inference.byte_count, 2 * 24 * 4.0);
}

TEST(EinsumCost, ProductWithoutContractionIsElementwise) {
  const OpCost outer = einsum("i,j->ij", {{3}, {4}}, {3, 4});
  EXPECT_EQ(outer.op_class, OpClass::kElementwise);
  EXPECT_DOUBLE_EQ(outer.inference.mac_count, 0);
  EXPECT_DOUBLE_EQ(outer.inference.flop_count, 12);
}

TEST(EinsumCost, ThreeOperandsContractLeftToRight) {
  // (ij,jk -> ik) then (ik,kl -> il): I·J·K + I·K·L, not I·J·K·L.
  const OpCost cost = einsum("ij,jk,kl->il", {{2, 3}, {3, 4}, {4, 5}}, {2, 5});
  EXPECT_DOUBLE_EQ(cost.inference.mac_count, 2.0 * 3 * 4 + 2.0 * 4 * 5);
  EXPECT_DOUBLE_EQ(cost.inference.kernel_count, 2);
  // The intermediate [2, 4] is written and read once.
  EXPECT_DOUBLE_EQ(cost.inference.byte_count, 4.0 * (6 + 12 + 20 + 10 + 2 * 8));
}

TEST(EinsumCost, BadEquationIsInvalidInputNamingNodeAndEquation) {
  const std::vector<std::pair<std::string, std::vector<Shape>>> bad = {
      {"ij,jk->ik", {{2, 3}}},          // two terms, one input
      {"ij->ix", {{2, 3}}},             // output letter in no input
      {"i$->i", {{2, 3}}},              // not a letter
      {"ij,jk->ik", {{2, 3}, {4, 5}}},  // j is 3 and 4
      {"ijk->i", {{2, 3}}},             // three letters for rank 2
      {"ij->ii", {{2, 3}}},             // repeated output letter
      {"ij->i->j", {{2, 3}}},           // two arrows
      {"i...j...->ij", {{2, 3, 4}}},    // two ellipses
  };
  for (const auto& [equation, shapes] : bad) {
    SCOPED_TRACE(equation);
    try {
      einsum(equation, shapes, {2});
      ADD_FAILURE() << "expected InvalidInput";
    } catch (const InvalidInput& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("/Einsum0"), std::string::npos) << what;
      EXPECT_NE(what.find("'" + equation + "'"), std::string::npos) << what;
    }
  }
}

}  // namespace
}  // namespace nnergy::graph
