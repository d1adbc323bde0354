#include "nnergy/kernel/moe_model.h"

#include <gtest/gtest.h>

#include <numeric>

#include "nnergy/core/error.h"
#include "toy_device.h"

namespace nnergy::kernel {
namespace {

// The toy GEMM parameters for the MoE layers and the dense GEMMs alike.
KernelParameters toy_parameters() {
  KernelParameters k;
  const GemmParameters p = toy_gemm_parameters();
  k.moe[KernelParameters::kDefaultEngine]["bf16"] = p;
  k.gemm[KernelParameters::kDefaultEngine]["bf16"] = p;
  k.power.base = 0;
  k.power.compute = 0.5;
  k.power.memory = 0;
  return k;
}

MoeShape shape(double tokens, double topk, double experts, double ep = 1, double alpha = 0) {
  MoeShape s;
  s.tokens = tokens;
  s.hidden = 1024;
  s.inter = 512;
  s.topk = topk;
  s.experts = experts;
  s.ep = ep;
  s.power_law_alpha = alpha;
  return s;
}

double rows(const std::vector<GemmGroup>& groups) {
  return std::accumulate(groups.begin(), groups.end(), 0.0,
                         [](double sum, const GemmGroup& g) { return sum + g.m * g.count; });
}

struct LoadCase {
  double tokens, topk, experts, ep;
  double rows_per_expert, active;
};

TEST(MoeModel, BalancedRoutingSpreadsTheChoicesOverThisGpusExperts) {
  for (const LoadCase& c : {
           LoadCase{64, 8, 128, 1, 4, 128},    // 512 choices over 128 experts
           LoadCase{4, 2, 128, 1, 1, 8},       // 8 choices: 8 experts of one row, 120 idle
           LoadCase{1024, 8, 128, 8, 64, 16},  // ep 8: 1024 of the 8192 choices, 16 experts here
           LoadCase{1, 8, 256, 8, 1, 1},       // one token: one of its 8 experts here on average
       }) {
    const std::vector<GemmGroup> g = expert_loads(shape(c.tokens, c.topk, c.experts, c.ep));
    ASSERT_EQ(g.size(), 1u) << c.tokens;
    EXPECT_DOUBLE_EQ(g[0].m, c.rows_per_expert) << c.tokens;
    EXPECT_DOUBLE_EQ(g[0].count, c.active) << c.tokens;
  }
}

TEST(MoeModel, PowerLawRoutingFavoursTheFirstExpertsAndKeepsEveryChoice) {
  // 200 choices over 8 experts at shares 1, 1/2, …, 1/8 (sum 2.718): 73.6, 36.8, … rows.
  const std::vector<GemmGroup> g = expert_loads(shape(100, 2, 8, 1, 1.0));
  EXPECT_DOUBLE_EQ(g.front().m, 74);
  for (std::size_t i = 1; i < g.size(); ++i) EXPECT_LT(g[i].m, g[i - 1].m);
  EXPECT_NEAR(rows(g), 200, 4);  // rounding each expert's rows
}

TEST(MoeModel, NoExpertTakesMoreThanEveryToken) {
  // Every token chooses all 8 experts: each takes all 10, however skewed the shares.
  const std::vector<GemmGroup> g = expert_loads(shape(10, 8, 8, 1, 1.0));
  ASSERT_EQ(g.size(), 1u);
  EXPECT_DOUBLE_EQ(g[0].m, 10);
  EXPECT_DOUBLE_EQ(g[0].count, 8);
}

TEST(MoeModel, AOneExpertLayerIsItsTwoGemmsAndThePermutation) {
  // One expert, top-1: the up (gate and up: 1280 × 1024 × 1024) and down (1280 × 1024 × 512)
  // products of the dense MLP, plus the permutation's 16-bit rows moved (2·1280 + 1280) × 1024.
  const KernelParameters k = toy_parameters();
  const GemmParameters& p = k.moe.at(KernelParameters::kDefaultEngine).at("bf16");
  MoeShape s = shape(1280, 1, 1);
  const double up = gemm_time_s(toy_device(), {1280, 1024, 1024, 1}, GemmFormat::k16Bit, p, 1000);
  const double down = gemm_time_s(toy_device(), {1280, 1024, 512, 1}, GemmFormat::k16Bit, p, 1000);
  const double permute = (2 * 1280.0 + 1280) * 1024 * 2 / 1e12;
  EXPECT_NEAR(moe_time_s(toy_device(), s, GemmFormat::k16Bit, p, 1000), up + down + permute, 1e-15);
}

TEST(MoeModel, AGroupedGemmOfOneGroupIsTheBatchedGemm) {
  const GemmParameters p = toy_parameters().moe.at(KernelParameters::kDefaultEngine).at("bf16");
  const GemmGroup group{300, 7};
  const GroupedGemmTime t =
      grouped_gemm_time(toy_device(), {&group, 1}, 2048, 1024, GemmFormat::k16Bit, p, 1000);
  EXPECT_DOUBLE_EQ(t.total_s,
                   gemm_time_s(toy_device(), {300, 2048, 1024, 7}, GemmFormat::k16Bit, p, 1000));
}

TEST(MoeModel, DecodeIsBoundByTheActiveExpertsWeights) {
  // One token, top-8 of 128: eight experts' weights (3 × 1024 × 512 × 2 B each) stream from
  // DRAM; top-2 reads a quarter of them.
  const KernelParameters k = toy_parameters();
  const KernelEstimate eight = predict_moe(toy_device(), shape(1, 8, 128), GemmFormat::k16Bit, k);
  const KernelEstimate two = predict_moe(toy_device(), shape(1, 2, 128), GemmFormat::k16Bit, k);
  EXPECT_EQ(eight.bound, Bound::kMemory);
  EXPECT_NEAR(eight.memory_s / two.memory_s, 4, 0.01);
  EXPECT_GT(eight.time_s, 3.5 * two.time_s);
}

TEST(MoeModel, SkewedRoutingSlowsTheRankHoldingTheFavouriteExperts) {
  const KernelParameters k = toy_parameters();
  const double balanced =
      predict_moe(toy_device(), shape(8192, 8, 128, 8), GemmFormat::k16Bit, k).time_s;
  const double skewed =
      predict_moe(toy_device(), shape(8192, 8, 128, 8, 1.01), GemmFormat::k16Bit, k).time_s;
  EXPECT_GT(skewed, 1.5 * balanced);
}

TEST(MoeModel, RefusesShapesNoEngineRuns) {
  const KernelParameters k = toy_parameters();
  MoeShape not_dividing = shape(16, 2, 10, 4);
  EXPECT_THROW(predict_moe(toy_device(), not_dividing, GemmFormat::k16Bit, k), InvalidInput);
  EXPECT_THROW(predict_moe(toy_device(), shape(16, 9, 8), GemmFormat::k16Bit, k), InvalidInput);
  MoeShape tp = shape(16, 2, 8);
  tp.tp = 3;
  EXPECT_THROW(predict_moe(toy_device(), tp, GemmFormat::k16Bit, k), InvalidInput);
  EXPECT_THROW(predict_moe(toy_device(), shape(0, 2, 8), GemmFormat::k16Bit, k), InvalidInput);
  // The toy GPU has no fp4 units.
  EXPECT_THROW(predict_moe(toy_device(), shape(16, 2, 8), GemmFormat::kNvfp4, k), InvalidInput);
}

}  // namespace
}  // namespace nnergy::kernel
