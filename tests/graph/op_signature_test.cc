#include "nnergy/graph/op_signature.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "nnergy/core/error.h"
#include "nnergy/graph/onnx_importer.h"
#include "nnergy/graph/op_catalog.h"
#include "onnx_builder.h"

namespace nnergy::graph {
namespace {

using testing::OnnxBuilder;

// Three same-shaped 1×1 convolutions separated by ReLUs, then a Flatten.
Network repeated_blocks() {
  OnnxBuilder b;
  b.input("x", {std::string("N"), 4, 8, 8});
  for (const char* w : {"w0", "w1", "w2"}) b.input(w, {4, 4, 1, 1});
  b.output("y");
  b.node("Conv", {"x", "w0"}, {"c0"}, "/b0/conv/Conv");
  b.node("Relu", {"c0"}, {"r0"}, "/b0/relu/Relu");
  b.node("Conv", {"r0", "w1"}, {"c1"}, "/b1/conv/Conv");
  b.node("Relu", {"c1"}, {"r1"}, "/b1/relu/Relu");
  b.node("Conv", {"r1", "w2"}, {"c2"}, "/b2/conv/Conv");
  b.node("Flatten", {"c2"}, {"y"}, "/Flatten");
  return import_onnx_bytes(b.bytes(), "blocks.onnx", DimBindings{});
}

TEST(OpSignature, EqualWorkGivesEqualSignature) {
  const Network net = repeated_blocks();
  EXPECT_EQ(op_signature(net, net.nodes()[2]), op_signature(net, net.nodes()[4]));
  EXPECT_EQ(op_signature(net, net.nodes()[1]), op_signature(net, net.nodes()[3]));
  // The first convolution reads the data input and needs no data gradient: a different op.
  EXPECT_NE(op_signature(net, net.nodes()[0]), op_signature(net, net.nodes()[2]));
  EXPECT_THAT(op_signature(net, net.nodes()[2]),
              ::testing::StartsWith("Conv fp32 x[1, 4, 8, 8] w[4, 4, 1, 1] {"));
}

TEST(OpSignature, UniqueOperationsCountOccurrencesAndFlagWhitelist) {
  const Network net = repeated_blocks();
  const auto unique = unique_operations(net, Whitelist::standard());
  ASSERT_EQ(unique.size(), 4u);  // first conv, relu, later conv, flatten
  EXPECT_EQ(unique[0].count(), 1u);
  EXPECT_EQ(unique[1].op_type, "Relu");
  EXPECT_EQ(unique[1].count(), 2u);
  EXPECT_EQ(unique[2].count(), 2u);
  EXPECT_TRUE(unique[2].whitelisted);
  EXPECT_EQ(unique[3].op_type, "Flatten");
  EXPECT_FALSE(unique[3].whitelisted);

  const auto custom = unique_operations(net, Whitelist::parse("Flatten", "--whitelist"));
  EXPECT_TRUE(custom[3].whitelisted);
  EXPECT_FALSE(custom[0].whitelisted);
}

TEST(Whitelist, ParseRejectsEmptyAndMalformedLists) {
  EXPECT_THROW(Whitelist::parse("", "--whitelist"), InvalidInput);
  EXPECT_THROW(Whitelist::parse(" , ", "--whitelist"), InvalidInput);
  EXPECT_THROW(Whitelist::parse("Conv;Gemm", "--whitelist"), InvalidInput);
  EXPECT_EQ(Whitelist::parse("Conv, Gemm", "--whitelist").ops().size(), 2u);
}

std::string whitelist_message(const std::string& list) {
  try {
    Whitelist::parse(list, "--whitelist");
  } catch (const InvalidInput& e) {
    return e.what();
  }
  return "(no InvalidInput thrown)";
}

TEST(Whitelist, ParseRejectsAnUnknownOperatorTypeAndSuggestsTheNearest) {
  EXPECT_EQ(whitelist_message("Conv,MaxPol"),
            "--whitelist 'Conv,MaxPol': expected ONNX operator types (e.g. Conv, Gemm, MatMul, "
            "Relu; case-sensitive), found 'MaxPol'; did you mean 'MaxPool'? correct or remove it "
            "(a custom-domain type is written domain.Type)");
  // ONNX names are case-sensitive: "conv" would match no node.
  using ::testing::HasSubstr;
  EXPECT_THAT(whitelist_message("conv"), HasSubstr("found 'conv'; did you mean 'Conv'?"));
  EXPECT_THAT(whitelist_message("Rleu, Gemm"), HasSubstr("found 'Rleu'; did you mean 'Relu'?"));
  EXPECT_THAT(whitelist_message("Gemm,Linear"), HasSubstr("found 'Linear'; correct or remove it"));
}

TEST(Whitelist, ParseAcceptsEveryKnownOnnxTypeAndCustomDomainTypes) {
  // The standard list, and every type the op catalog costs.
  const Whitelist standard = Whitelist::standard();
  std::string list;
  for (const std::string& op : standard.ops()) list += op + ",";
  EXPECT_EQ(Whitelist::parse(list, "--whitelist").ops(), standard.ops());
  for (const std::string& op : known_op_types()) {
    EXPECT_NO_THROW(Whitelist::parse(op, "--whitelist")) << op;
  }
  // A standard ONNX operator the catalog costs only by its fallback, and custom-domain types
  // as the importer names them (domain.Type), which cannot be checked.
  EXPECT_TRUE(Whitelist::parse("LRN", "--whitelist").contains("LRN"));
  EXPECT_TRUE(Whitelist::parse("com.microsoft.FusedConv, Conv", "--whitelist")
                  .contains("com.microsoft.FusedConv"));
}

}  // namespace
}  // namespace nnergy::graph
