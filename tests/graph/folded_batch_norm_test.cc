#include "nnergy/graph/folded_batch_norm.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "nnergy/graph/onnx_importer.h"
#include "nnergy/graph/zoo.h"
#include "onnx_builder.h"

namespace nnergy::graph {
namespace {

using testing::OnnxBuilder;

const std::filesystem::path kDataDir = NNERGY_TEST_DATA_DIR;

// x → Conv → [BatchNormalization] → Relu → Conv → [BatchNormalization] → Relu, weights as graph
// inputs; `bias` gives each Conv a bias input, `batch_norm` puts a BatchNormalization after it.
Network convnet(bool bias, bool batch_norm, int convs = 2) {
  OnnxBuilder b;
  b.input("x", {std::string("batch"), 4, 8, 8});
  std::string previous = "x";
  for (int i = 0; i < convs; ++i) {
    const std::string k = std::to_string(i);
    b.input("w" + k, {4, 4, 3, 3});
    std::vector<std::string> inputs = {previous, "w" + k};
    if (bias) {
      b.input("b" + k, {4});
      inputs.push_back("b" + k);
    }
    auto& conv = b.node("Conv", inputs, {"c" + k});
    OnnxBuilder::set_ints(conv, "pads", {1, 1, 1, 1});
    std::string activation_input = "c" + k;
    if (batch_norm) {
      for (const char* p : {"scale", "shift", "mean", "var"}) b.input(p + k, {4});
      b.node("BatchNormalization", {"c" + k, "scale" + k, "shift" + k, "mean" + k, "var" + k},
             {"n" + k});
      activation_input = "n" + k;
    }
    b.node("Relu", {activation_input}, {"r" + k});
    previous = "r" + k;
  }
  b.output(previous);
  return import_onnx_bytes(b.bytes(), "convnet.onnx", DimBindings{});
}

TEST(FoldedBatchNorm, BiasedConvsWithoutNormalizationMatch) {
  const FoldedBatchNormSignature s = detect_folded_batch_norm(convnet(true, false));
  EXPECT_EQ(s.conv_count, 2u);
  EXPECT_EQ(s.biased_conv_count, 2u);
  EXPECT_EQ(s.normalized_conv_count, 0u);
  EXPECT_TRUE(s.matches);
  const std::string warning = folded_batch_norm_warning(s);
  EXPECT_THAT(warning, ::testing::HasSubstr("If the model has BatchNorm layers"));
  EXPECT_THAT(warning, ::testing::HasSubstr("training=torch.onnx.TrainingMode.TRAINING"));
  EXPECT_THAT(warning, ::testing::HasSubstr("do_constant_folding=False"));
}

TEST(FoldedBatchNorm, KeptBatchNormDoesNotMatch) {
  const FoldedBatchNormSignature with_bias = detect_folded_batch_norm(convnet(true, true));
  EXPECT_EQ(with_bias.normalized_conv_count, 2u);
  EXPECT_FALSE(with_bias.matches);
  EXPECT_FALSE(detect_folded_batch_norm(convnet(false, true)).matches);
}

TEST(FoldedBatchNorm, UnbiasedOrSingleConvDoesNotMatch) {
  EXPECT_FALSE(detect_folded_batch_norm(convnet(false, false)).matches);
  const FoldedBatchNormSignature one = detect_folded_batch_norm(convnet(true, false, 1));
  EXPECT_EQ(one.conv_count, 1u);
  EXPECT_FALSE(one.matches);
}

TEST(FoldedBatchNorm, NormalizationBehindATransposeCounts) {
  OnnxBuilder b;
  b.input("x", {std::string("batch"), 4, 8, 8}).input("w0", {4, 4, 3, 3}).input("b0", {4});
  b.input("w1", {4, 4, 3, 3}).input("b1", {4}).input("g", {4}).input("beta", {4});
  OnnxBuilder::set_ints(b.node("Conv", {"x", "w0", "b0"}, {"c0"}), "pads", {1, 1, 1, 1});
  auto& to_last = b.node("Transpose", {"c0"}, {"t0"});
  OnnxBuilder::set_ints(to_last, "perm", {0, 2, 3, 1});
  auto& norm = b.node("LayerNormalization", {"t0", "g", "beta"}, {"l0"});
  OnnxBuilder::set_int(norm, "axis", -1);
  auto& to_first = b.node("Transpose", {"l0"}, {"t1"});
  OnnxBuilder::set_ints(to_first, "perm", {0, 3, 1, 2});
  OnnxBuilder::set_ints(b.node("Conv", {"t1", "w1", "b1"}, {"y"}), "pads", {1, 1, 1, 1});
  b.output("y");
  const FoldedBatchNormSignature s =
      detect_folded_batch_norm(import_onnx_bytes(b.bytes(), "convnext_like.onnx", DimBindings{}));
  EXPECT_EQ(s.conv_count, 2u);
  EXPECT_EQ(s.normalized_conv_count, 1u);
  EXPECT_FALSE(s.matches);
}

TEST(FoldedBatchNorm, ZooResnet50KeepsItsBatchNorm) {
  const FoldedBatchNormSignature s =
      detect_folded_batch_norm(import_onnx(resolve_model("resnet50", kDataDir), DimBindings{}));
  EXPECT_EQ(s.conv_count, 53u);
  EXPECT_EQ(s.normalized_conv_count, 53u);
  EXPECT_FALSE(s.matches);
}

}  // namespace
}  // namespace nnergy::graph
