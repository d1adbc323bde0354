#include "nnergy/graph/module_path.h"

#include <gtest/gtest.h>

namespace nnergy::graph {
namespace {

TEST(ModulePath, StripsRepeatedParentPrefixAndOperator) {
  EXPECT_EQ(module_path_from_node_name("/layer1/layer1.0/conv1/Conv"), "layer1/0/conv1");
  EXPECT_EQ(module_path_from_node_name("/layer1/layer1.0/relu_2/Relu"), "layer1/0/relu_2");
}

TEST(ModulePath, DotsInUnprefixedSegmentsBecomeSlashes) {
  EXPECT_EQ(module_path_from_node_name("/encoder/layer.0/attention/self/query/MatMul"),
            "encoder/layer/0/attention/self/query");
  EXPECT_EQ(module_path_from_node_name("/features/features.0/features.0.0/Conv"), "features/0/0");
}

TEST(ModulePath, TopLevelAndUnscopedNamesHaveEmptyPath) {
  EXPECT_EQ(module_path_from_node_name("/Flatten"), "");
  EXPECT_EQ(module_path_from_node_name("Conv_12"), "");
  EXPECT_EQ(module_path_from_node_name(""), "");
}

TEST(ModulePath, SingleScope) { EXPECT_EQ(module_path_from_node_name("/fc/Gemm"), "fc"); }

}  // namespace
}  // namespace nnergy::graph
