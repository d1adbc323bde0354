#include "nnergy/core/nearest_name.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace nnergy {
namespace {

TEST(EditDistance, CountsInsertionsDeletionsSubstitutionsAndSwaps) {
  EXPECT_EQ(edit_distance("", ""), 0u);
  EXPECT_EQ(edit_distance("abc", ""), 3u);
  EXPECT_EQ(edit_distance("", "abc"), 3u);
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);  // k→s, e→i, +g
  EXPECT_EQ(edit_distance("Conv", "conv"), 1u);       // case counts here
  EXPECT_EQ(edit_distance("MaxPool", "MaxPol"), 1u);
  EXPECT_EQ(edit_distance("Rleu", "Relu"), 1u);  // one swap of neighbours
  EXPECT_EQ(edit_distance("ca", "abc"), 3u);     // optimal string alignment, not Damerau's 2
  EXPECT_EQ(edit_distance("h100-pcie", "h100-sxm"), 4u);
}

TEST(NearestName, SuggestsOnlyWhatIsCloseEnoughToBeATypo) {
  const std::vector<std::string> ops = {"Conv", "ConvTranspose", "MaxPool", "Relu", "Gemm"};
  EXPECT_EQ(nearest_name("conv", ops), "Conv");  // case alone is distance 0
  EXPECT_EQ(nearest_name("MaxPol", ops), "MaxPool");
  EXPECT_EQ(nearest_name("Rleu", ops), "Relu");
  EXPECT_EQ(nearest_index("gemn", ops), std::optional<std::size_t>(4));
  // At most max(1, length / 3) edits: "Conv2d" is 2 from "Conv" (limit 2), "Cnv2d" 3 (limit 1).
  EXPECT_EQ(nearest_name("Conv2d", ops), "Conv");
  EXPECT_EQ(nearest_name("Cnv2d", ops), std::nullopt);
  EXPECT_EQ(nearest_name("Linear", ops), std::nullopt);
  EXPECT_EQ(nearest_name("", ops), std::nullopt);
  EXPECT_EQ(nearest_name("Relu", {}), std::nullopt);
  // Ties go to the earlier candidate.
  EXPECT_EQ(nearest_name("ab", {"ax", "ay"}), "ax");
}

TEST(NearestName, DidYouMeanPhrase) {
  EXPECT_EQ(did_you_mean("MaxPol", {"MaxPool", "Relu"}), "did you mean 'MaxPool'?");
  EXPECT_EQ(did_you_mean("Linear", {"MaxPool", "Relu"}), "");
}

}  // namespace
}  // namespace nnergy
