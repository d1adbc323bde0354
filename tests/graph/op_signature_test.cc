#include "nnergy/graph/op_signature.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "nnergy/core/error.h"
#include "nnergy/graph/onnx_importer.h"
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

}  // namespace
}  // namespace nnergy::graph
