// TEF, STEF/STPF, EDD, similarity and the writers (seed 001 Defs. 3.2–3.5, §5.4.1).
#include "nnergy/account/footprint.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "account_test_support.h"
#include "json_depth_bomb.h"
#include "nnergy/account/accounting_precision.h"
#include "nnergy/account/footprint_writers.h"
#include "nnergy/core/error.h"
#include "nnergy/core/json_text.h"

namespace nnergy::account {
namespace {

using ::testing::HasSubstr;
constexpr double kEnergyTolerance_j = 1e-9;

FootprintEntry entry(const std::string& name, double energy_j, double time_s = 1) {
  FootprintEntry e;
  e.name = name;
  e.energy_j = energy_j;
  e.time_s = time_s;
  e.forward_energy_j = energy_j;
  return e;
}

TEST(Footprint, TefSumsEventsByQualifiedNameAndPass) {
  std::vector<TraceEvent> events = {testing::cpu_event("m/op", 1, 0, 1),
                                    testing::cpu_event("m/op", 1, 2, 1)};
  events[1].pass = Pass::kBackward;
  const Accounting a =
      account_energy(events, {testing::timeline("cpu", {{0, 10}, {1, 30}, {4, 30}})}, {});
  const Footprint tef = tensor_energy_footprint(events, a);
  ASSERT_EQ(tef.size(), 1u);
  EXPECT_NEAR(tef[0].energy_j, 40.0, kEnergyTolerance_j);
  EXPECT_NEAR(tef[0].other_energy_j, 10.0, kEnergyTolerance_j);
  EXPECT_NEAR(tef[0].backward_energy_j, 30.0, kEnergyTolerance_j);
  EXPECT_NEAR(tef[0].power_w(), 20.0, kEnergyTolerance_j);  // 40 J over 2 s
  EXPECT_EQ(tef[0].event_count, 2u);
}

TEST(Footprint, DefaultRulesSummarizeSelfSimilarLayers) {
  // Seed 001 §3.3: layer_0 5 J and layer_1 3 J of the same tensor sum to 8 J.
  const Footprint tef = {entry("bert/encoder/layer_0/output/dense/MatMul", 5),
                         entry("bert/encoder/layer_1/output/dense/MatMul", 3),
                         entry("gpt.h.3.attn/aten::mm", 2),
                         entry("gpt.h.4.attn/aten::mm", 1),
                         entry("ResNet.layer1.0.conv1/aten::conv2d", 4),
                         entry("ResNet.layer1.1.conv1/aten::conv2d", 4),
                         entry("vit.blocks.11/aten::add", 1),
                         entry("other/layer_xyz", 1),
                         entry("ProfilerStep#3", 1),
                         entry("ProfilerStep#4", 2)};
  const Footprint stef = summarize(tef, default_summarize_rules());
  std::map<std::string, double> by_name;
  for (const auto& e : stef) by_name[e.name] = e.energy_j;
  EXPECT_DOUBLE_EQ(by_name["bert/encoder/layer_*/output/dense/MatMul"], 8.0);
  EXPECT_DOUBLE_EQ(by_name["gpt.h.*.attn/aten::mm"], 3.0);
  EXPECT_DOUBLE_EQ(by_name["ResNet.layer1.*.conv1/aten::conv2d"], 8.0);
  EXPECT_DOUBLE_EQ(by_name["vit.blocks.*/aten::add"], 1.0);
  EXPECT_DOUBLE_EQ(by_name["other/layer_xyz"], 1.0);  // not a numbered layer
  EXPECT_DOUBLE_EQ(by_name["ProfilerStep#*"], 3.0);
  EXPECT_EQ(stef.size(), 6u);
}

TEST(Footprint, UserRulesAndBadRules) {
  const Footprint tef = {entry("R.layer1.0/op", 1), entry("R.layer2.1/op", 2)};
  const Footprint stef = summarize(tef, {parse_summarize_rule(R"(layer\d+\.\d+=block)", "x")});
  ASSERT_EQ(stef.size(), 1u);
  EXPECT_EQ(stef[0].name, "R.block/op");
  EXPECT_DOUBLE_EQ(stef[0].energy_j, 3.0);
  EXPECT_THROW(parse_summarize_rule("no-equals", "--summarize"), InvalidInput);
  EXPECT_THROW(parse_summarize_rule("([=x", "--summarize"), InvalidInput);
}

TEST(Footprint, NamePathSplitsScopesAtSlashAndDot) {
  EXPECT_EQ(name_path("ResNet.layer1.0.conv1/aten::conv2d"),
            (std::vector<std::string>{"ResNet", "layer1", "0", "conv1", "aten::conv2d"}));
  EXPECT_EQ(name_path("bert/encoder/MatMul"),
            (std::vector<std::string>{"bert", "encoder", "MatMul"}));
  EXPECT_EQ(name_path("aten::add_"), (std::vector<std::string>{"aten::add_"}));
}

TEST(Footprint, EddNestsAndSumsEachLevel) {
  const Footprint tef = {entry("A.b/x", 1), entry("A.b/y", 2), entry("A.c/x", 4), entry("top", 8)};
  const EddNode root = energy_distribution_diagram(tef);
  EXPECT_DOUBLE_EQ(root.energy_j, 15.0);
  ASSERT_EQ(root.children.size(), 2u);
  EXPECT_EQ(root.children[0].name, "top");  // largest first
  const EddNode& a = root.children[1];
  EXPECT_EQ(a.name, "A");
  EXPECT_DOUBLE_EQ(a.energy_j, 7.0);
  ASSERT_EQ(a.children.size(), 2u);
  EXPECT_EQ(a.children[0].name, "c");
  EXPECT_DOUBLE_EQ(a.children[1].energy_j, 3.0);
}

// Security review: one trace event named with 100,000 '/' nested the EDD 100,000 levels deep, so
// that TreeBuilder::finish recursed once per level and overflowed the stack (SIGSEGV); at 10,000
// levels the indented JSON of the EDD was 1.8 GB.
TEST(Footprint, EddDepthIsCappedAndADeepNameKeepsItsRestAsTheLastLevel) {
  std::string deep;
  for (int i = 0; i < 100000; ++i) deep += "m/";
  deep += "op";
  EXPECT_EQ(name_depth(deep), 100001u);
  const std::vector<std::string> path = name_path(deep);
  ASSERT_EQ(path.size(), kMaxEddDepth);
  EXPECT_EQ(path[kMaxEddDepth - 2], "m");
  EXPECT_EQ(path.back(), deep.substr(2 * (kMaxEddDepth - 1)));

  // A name exactly at the cap, and the dotted scopes, are split as before.
  std::string at_cap;
  // (kMaxEddDepth - 2) / 2 scopes of two components, then "c" and "op": kMaxEddDepth components.
  for (std::size_t i = 0; i < (kMaxEddDepth - 2) / 2; ++i) at_cap += "a.b/";
  at_cap += "c/";
  at_cap += "op";
  EXPECT_EQ(name_depth(at_cap), kMaxEddDepth);
  EXPECT_EQ(name_path(at_cap).back(), "op");
  EXPECT_EQ(name_depth("A..b//op"), 3u);

  const EddNode edd = energy_distribution_diagram({entry(deep, 5), entry("a.b/op", 1)});
  std::size_t levels = 0;
  const EddNode* node = &edd;
  while (!node->children.empty()) {
    node = &node->children.front();  // the deep name's branch holds the most energy
    ++levels;
  }
  EXPECT_EQ(levels, kMaxEddDepth);
  EXPECT_DOUBLE_EQ(node->energy_j, 5);
  EXPECT_EQ(node->name, path.back());
  EXPECT_LT(core::json_text(edd_json(edd)).size(), 1000000u);
  EXPECT_LT(folded_stacks({entry(deep, 5)}, 0).size(), 300000u);
}

TEST(Footprint, SimilarityIsPearsonOverTheUnionOfNames) {
  const Footprint a = {entry("x", 1), entry("y", 2), entry("z", 3)};
  const Footprint doubled = {entry("x", 2), entry("y", 4), entry("z", 6)};
  EXPECT_NEAR(accounting_similarity(a, doubled), 1.0, 1e-12);
  const Footprint reversed = {entry("x", 3), entry("y", 2), entry("z", 1)};
  EXPECT_NEAR(accounting_similarity(a, reversed), -1.0, 1e-12);
  // Missing names count 0 J: (1,2,3,0) vs (1,2,0,3) → r = −0.2 by hand:
  // means 1.5, deviations (−.5,.5,1.5,−1.5) and (−.5,.5,−1.5,1.5): Σxy = .25+.25−2.25−2.25 = −4,
  // Σx² = Σy² = 5, r = −4/5 = −0.8.
  const Footprint b = {entry("x", 1), entry("y", 2), entry("w", 3)};
  EXPECT_NEAR(accounting_similarity(a, b), -0.8, 1e-12);
  EXPECT_TRUE(std::isnan(similarity_or_nan({entry("x", 1)}, {entry("x", 1)})));
}

TEST(Footprint, WideningAndPairwiseSimilarity) {
  const Footprint a = {entry("x", 1), entry("y", 2), entry("z", 3)};
  const Footprint b = {entry("x", 1), entry("y", 2), entry("z", 3.5)};
  const auto widening = widening_similarity({a, b, a});
  ASSERT_EQ(widening.size(), 2u);
  EXPECT_GT(widening[0], 0.99);
  const auto pairs = pairwise_similarity({a, b});
  EXPECT_NEAR(pairs[0][0], 1.0, 1e-12);
  EXPECT_NEAR(pairs[0][1], pairs[1][0], 1e-15);
}

TEST(FootprintWriters, FoldedStacksAreIntegerMicrojoules) {
  const Footprint tef = {entry("A.b/op x", 0.0012345), entry("zero", 0)};
  EXPECT_EQ(folded_stacks(tef, 0.5), "A;b;op_x 1235\n(idle) 500000\n");
}

TEST(FootprintWriters, CsvHasHeaderAndQuotedNames) {
  const std::string csv = footprint_csv({entry("a,b", 2, 4)}, "# tool: nnergy\n");
  EXPECT_THAT(csv, HasSubstr("# tool: nnergy\nname,energy_j,time_s,power_w,"));
  EXPECT_THAT(csv, HasSubstr("\"a,b\",2,4,0.5,"));
}

// Security review: `nnergy account compare` wrote an entry nested 100,000 deep into its message
// through a recursive dump() and overflowed the stack (SIGSEGV).
TEST(FootprintWriters, ReadingADeeplyNestedFootprintIsInvalidInput) {
  const std::filesystem::path path =
      std::filesystem::temp_directory_path() /
      ("nnergy_deep_footprint_" + std::to_string(::getpid()) + ".json");
  std::ofstream(path) << R"({"tef": {"entries": [)" << test_support::nested_json_arrays() << "]}}";
  try {
    read_footprint_json(path);
    ADD_FAILURE() << "no exception";
  } catch (const InvalidInput& e) {
    EXPECT_THAT(e.what(), HasSubstr(path.string() + ": JSON nested deeper than 256 levels"));
  }
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace nnergy::account
