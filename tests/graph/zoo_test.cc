// The bundled zoo: every model imports, and MAC counts match the published torchvision figures.
#include "nnergy/graph/zoo.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>

#include "nnergy/core/error.h"
#include "nnergy/graph/onnx_importer.h"
#include "nnergy/graph/op_catalog.h"

namespace nnergy::graph {
namespace {

const std::filesystem::path kDataDir = NNERGY_TEST_DATA_DIR;

double macs_per_sample(const std::string& name) {
  const Network net = import_onnx(resolve_model(name, kDataDir), DimBindings{});
  double macs = 0;
  for (const Node& node : net.nodes()) macs += op_cost(net, node).inference.mac_count;
  return macs;
}

TEST(Zoo, HasTheModelsTheDocsPromise) {
  std::vector<std::string> names;
  for (const ZooModel& m : list_zoo(kDataDir)) names.push_back(m.name);
  for (const char* expected : {"alexnet",         "vgg16",
                               "vgg19",           "resnet18",
                               "resnet34",        "resnet50",
                               "resnet101",       "resnet152",
                               "mobilenet_v2",    "mobilenet_v3_large",
                               "efficientnet_b0", "densenet121",
                               "convnext_base",   "squeezenet1_1",
                               "googlenet",       "shufflenet_v2_x1_0",
                               "vit_b_16",        "swin_t",
                               "bert_base",       "gpt2_small"}) {
    EXPECT_THAT(names, ::testing::Contains(expected));
  }
}

TEST(Zoo, EveryModelImportsWithKnownOperatorsAndStaticShapes) {
  for (const ZooModel& m : list_zoo(kDataDir)) {
    SCOPED_TRACE(m.name);
    DimBindings bindings;
    bindings.batch = 3;
    const Network net = import_onnx(m.path, bindings);
    EXPECT_GT(net.nodes().size(), 5u);
    EXPECT_GT(net.parameter_count(), 0);
    EXPECT_FALSE(net.description.empty());
    for (const Node& node : net.nodes()) {
      EXPECT_TRUE(op_cost(net, node).known) << node.op_type << " in " << node.name;
      for (std::size_t out : node.outputs) {
        for (std::int64_t dim : net.tensor(out).shape) EXPECT_GE(dim, 0) << node.name;
      }
    }
    // The batch binds the leading dimension of the data input.
    ASSERT_FALSE(net.data_inputs().empty());
    EXPECT_EQ(net.tensor(net.data_inputs()[0]).shape.at(0), 3);
  }
}

// Published GMACs at 224×224 (torchvision 0.14 model documentation, "GFLOPS" column, which counts
// multiply-accumulates of convolutions and linear/matmul layers). The four figures the docs of
// this project quote must match within 1 %.
TEST(Zoo, MacCountsMatchPublishedTorchvisionFigures) {
  const std::map<std::string, double> quoted = {
      {"resnet50", 4.09}, {"vgg16", 15.47}, {"mobilenet_v2", 0.30}, {"alexnet", 0.71}};
  for (const auto& [name, gmacs] : quoted) {
    SCOPED_TRACE(name);
    EXPECT_NEAR(macs_per_sample(name) / 1e9, gmacs, 0.01 * gmacs);
  }
}

// The rest of the zoo against the same table; the published figures carry two decimals, so
// the tolerance is 1 % plus half of the last published digit.
TEST(Zoo, MacCountsOfTheRestMatchPublishedFiguresWithinRounding) {
  const std::map<std::string, double> published = {
      {"vgg19", 19.63},          {"resnet18", 1.81},
      {"resnet34", 3.66},        {"resnet101", 7.80},
      {"resnet152", 11.51},      {"googlenet", 1.50},
      {"squeezenet1_1", 0.35},   {"densenet121", 2.83},
      {"efficientnet_b0", 0.39}, {"mobilenet_v3_large", 0.22},
      {"convnext_base", 15.36},  {"vit_b_16", 17.56},
      {"swin_t", 4.49},          {"shufflenet_v2_x1_0", 0.14}};
  for (const auto& [name, gmacs] : published) {
    SCOPED_TRACE(name);
    EXPECT_NEAR(macs_per_sample(name) / 1e9, gmacs, 0.01 * gmacs + 0.005);
  }
}

// Trainable parameters as torchvision reports them (sum of numel() over model.parameters());
// BatchNorm running statistics are buffers, not parameters.
TEST(Zoo, ParameterCountsMatchTorchvision) {
  const std::map<std::string, std::int64_t> expected = {{"resnet50", 25557032},
                                                        {"alexnet", 61100840},
                                                        {"vgg16", 138357544},
                                                        {"mobilenet_v2", 3504872}};
  for (const auto& [name, count] : expected) {
    const Network net = import_onnx(resolve_model(name, kDataDir), DimBindings{});
    EXPECT_EQ(net.parameter_count(), count) << name;
  }
}

// BERT-base, 128 tokens: 12 layers × (4·768² + 2·768·3072 projections per token, plus
// 2·128·768 attention products per token) · 128 tokens, plus the 768² pooler on one token.
TEST(Zoo, TransformerMacsFollowFromTheirDimensions) {
  const double tokens = 128, h = 768, ff = 3072;
  const double per_layer = tokens * (4 * h * h + 2 * h * ff) + 2 * tokens * tokens * h;
  EXPECT_NEAR(macs_per_sample("bert_base"), 12 * per_layer + h * h, 1e-6 * 12 * per_layer);
  // GPT-2 small: the same per layer (fused qkv is 3·768² + 768² output), plus the LM head.
  EXPECT_NEAR(macs_per_sample("gpt2_small"), 12 * per_layer + tokens * h * 50257,
              1e-6 * 12 * per_layer);
}

TEST(Zoo, UnknownNameListsTheZoo) {
  try {
    resolve_model("resnet5000", kDataDir);
    FAIL() << "expected InvalidInput";
  } catch (const InvalidInput& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("resnet50"));
    EXPECT_THAT(e.what(), ::testing::HasSubstr("resnet5000"));
  }
  EXPECT_EQ(resolve_model("some/dir/model.onnx", kDataDir), "some/dir/model.onnx");
}

}  // namespace
}  // namespace nnergy::graph
