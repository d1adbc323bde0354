// End-to-end tests of `nnergy kernel gemm|attention|moe|all-reduce`: the JSON keys tools read, a
// long GEMM on a B200 at its power limit, measured attention kernels, and the refusals (exit 2, one
// line on stderr, nothing on stdout).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "nnergy_runner.h"

namespace {

using nlohmann::json;
using nnergy::cli_test::run_json;
using nnergy::cli_test::run_nnergy;
using nnergy::cli_test::RunResult;
using testing::HasSubstr;

TEST(KernelCli, AGemmHasTimePowerAndEnergyWithTheirUncertainty) {
  const json j = run_json({"kernel", "gemm", "--m", "8192", "--n", "16384", "--k", "16384",
                           "--device", "b200", "--json"});
  ASSERT_FALSE(j.is_null());
  EXPECT_EQ(j["device"]["id"], "b200");
  EXPECT_EQ(j["engine"], "tensorrt-llm");
  const json& t = j["totals"];
  // Measured: about 2.4 ms at the 1000 W limit (AIConfigurator's B200 power table).
  EXPECT_NEAR(t["time_s"].get<double>(), 2.4e-3, 0.5e-3);
  EXPECT_NEAR(t["avg_power_w"].get<double>(), 1000, 60);
  EXPECT_NEAR(t["energy_j"].get<double>(),
              t["time_s"].get<double>() * t["avg_power_w"].get<double>(), 1e-9);
  EXPECT_GT(t["time_std_s"].get<double>(), 0);
  EXPECT_GT(t["avg_power_std_w"].get<double>(), 0);
  EXPECT_THAT(j["bound"].get<std::string>(), testing::AnyOf("power cap", "compute"));
  EXPECT_EQ(j["tiles"]["tile_m"].get<int>() * j["tiles"]["tile_n"].get<int>(), 256 * 128);
}

TEST(KernelCli, AttentionAnswersPrefillAndDecodeNearTheirMeasuredTimes) {
  // Measured (AIConfigurator's TensorRT-LLM tables): H100 prefill of 2 × 16384 tokens, 64/8
  // heads, 16.2 ms; H200 decode of 64 sequences over 4096 keys, 32/8 heads, 263 us.
  const json prefill = run_json({"kernel", "attention", "--batch", "2", "--seq", "16384", "--heads",
                                 "64", "--kv-heads", "8", "--device", "h100", "--json"});
  ASSERT_FALSE(prefill.is_null());
  EXPECT_EQ(prefill["kernel"], "attention");
  EXPECT_EQ(prefill["format"], "bf16/bf16");
  EXPECT_NEAR(prefill["totals"]["time_s"].get<double>(), 16.2e-3, 16.2e-3 * 0.3);
  EXPECT_EQ(prefill["shape"]["queries"].get<double>(), 16384);
  const json decode =
      run_json({"kernel", "attention", "--phase", "decode", "--batch", "64", "--seq", "4095",
                "--heads", "32", "--kv-heads", "8", "--device", "h200", "--json"});
  ASSERT_FALSE(decode.is_null());
  EXPECT_NEAR(decode["totals"]["time_s"].get<double>(), 263e-6, 263e-6 * 0.35);
  EXPECT_GT(decode["totals"]["time_std_s"].get<double>(), 0);
  EXPECT_THAT(decode["bound"].get<std::string>(), testing::AnyOf("memory", "power cap"));
  // An fp8 cache reads half the bytes: faster.
  const json fp8 = run_json({"kernel", "attention", "--phase", "decode", "--batch", "64", "--seq",
                             "4095", "--heads", "32", "--kv-heads", "8", "--kv-precision", "fp8",
                             "--device", "h200", "--json"});
  EXPECT_LT(fp8["totals"]["time_s"].get<double>(), decode["totals"]["time_s"].get<double>());
}

TEST(KernelCli, ACollectiveNearItsMeasuredTime) {
  // Measured (AIConfigurator's NCCL 2.29 table): an all-reduce of 64 MiB among 8 H100s, 349 us.
  const json j = run_json({"kernel", "all-reduce", "--bytes", "67108864", "--gpus", "8", "--device",
                           "h100", "--engine", "pytorch", "--json"});
  ASSERT_FALSE(j.is_null());
  EXPECT_EQ(j["kernel"], "all-reduce");
  EXPECT_NEAR(j["totals"]["time_s"].get<double>(), 349e-6, 349e-6 * 0.4);
  EXPECT_GT(j["achieved"]["gb_per_s"].get<double>(), 100);
  EXPECT_EQ(j["bound"], "link");
}

TEST(KernelCli, AMoeLayerNearItsMeasuredTime) {
  // Measured (AIConfigurator's TensorRT-LLM 1.3 table): Mixtral-8x7B's routed experts (hidden
  // 4096, expert intermediate 14336, top-2 of 8) for 4096 tokens on an H200 in bf16, 3595 us.
  const json j = run_json({"kernel", "moe", "--tokens", "4096", "--hidden", "4096", "--inter",
                           "14336", "--topk", "2", "--experts", "8", "--device", "h200", "--json"});
  ASSERT_FALSE(j.is_null());
  EXPECT_EQ(j["kernel"], "moe");
  EXPECT_NEAR(j["totals"]["time_s"].get<double>(), 3595e-6, 3595e-6 * 0.3);
  EXPECT_EQ(j["shape"]["active_experts"].get<double>(), 8);
  EXPECT_GT(j["totals"]["time_std_s"].get<double>(), 0);
  // Skewed routing: the GPU holding the favourite experts takes longer.
  const json skewed = run_json({"kernel", "moe", "--tokens", "4096", "--hidden", "4096", "--inter",
                                "14336", "--topk", "2", "--experts", "8", "--ep", "8", "--routing",
                                "power-law", "--device", "h200", "--json"});
  const json even =
      run_json({"kernel", "moe", "--tokens", "4096", "--hidden", "4096", "--inter", "14336",
                "--topk", "2", "--experts", "8", "--ep", "8", "--device", "h200", "--json"});
  ASSERT_FALSE(skewed.is_null());
  ASSERT_FALSE(even.is_null());
  EXPECT_GT(skewed["totals"]["time_s"].get<double>(), even["totals"]["time_s"].get<double>());
}

TEST(KernelCli, RefusesWhatItCannotAnswerInOneLine) {
  const std::vector<std::vector<std::string>> cases = {
      {"kernel", "gemm", "--m", "0", "--n", "4096", "--k", "4096", "--device", "h100"},
      {"kernel", "gemm", "--m", "1e12", "--n", "4096", "--k", "4096", "--device", "h100"},
      {"kernel", "gemm", "--m", "8", "--n", "4096", "--k", "4096", "--device", "h100",
       "--precision", "nvfp4"},
      {"kernel", "gemm", "--m", "8", "--n", "4096", "--k", "4096", "--device", "h100",
       "--precision", "fp9"},
      {"kernel", "gemm", "--m", "8", "--n", "4096", "--k", "4096", "--device", "h100", "--engine",
       "tgi"},
      {"kernel", "gemm", "--m", "8", "--n", "4096", "--k", "4096", "--device", "h1000"},
      {"kernel", "gemm", "--m", "8", "--n", "4096", "--k", "4096", "--device", "h100", "--clock",
       "5000"},
      {"kernel", "conv"},
      {"kernel", "attention", "--seq", "100", "--heads", "32", "--kv-heads", "6", "--device",
       "h100"},
      {"kernel", "attention", "--seq", "100", "--queries", "200", "--device", "h100"},
      {"kernel", "attention", "--phase", "decode", "--seq", "100", "--precision", "fp8", "--device",
       "h100"},
      {"kernel", "attention", "--phase", "verify", "--seq", "100", "--device", "h100"},
      {"kernel", "attention", "--seq", "100", "--kv-precision", "int4", "--device", "h100"},
      {"kernel", "all-reduce", "--bytes", "4096", "--gpus", "16", "--device", "h100"},
      {"kernel", "all-gather", "--bytes", "0", "--device", "h100"},
      {"kernel", "moe", "--tokens", "16", "--hidden", "4096", "--inter", "14336", "--topk", "2",
       "--experts", "8", "--ep", "3", "--device", "h100"},
      {"kernel", "moe", "--tokens", "16", "--hidden", "4096", "--inter", "14336", "--topk", "9",
       "--experts", "8", "--device", "h100"},
      {"kernel", "moe", "--tokens", "16", "--hidden", "4096", "--inter", "14336", "--topk", "2",
       "--experts", "8", "--routing", "zipf", "--device", "h100"},
  };
  const std::vector<std::string> expected = {"--m 0",
                                             "--m 1000000000000",
                                             "it runs: fp32",
                                             "--precision fp9",
                                             "--engine tgi",
                                             "h1000",
                                             "--clock",
                                             "conv",
                                             "--kv-heads 6",
                                             "--queries 200",
                                             "decodes in 16 bits",
                                             "--phase verify",
                                             "--kv-precision int4",
                                             "--gpus 16",
                                             "--bytes 0",
                                             "--ep 3",
                                             "--topk 9",
                                             "--routing zipf"};
  ASSERT_EQ(cases.size(), expected.size());
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const RunResult r = run_nnergy(cases[i]);
    EXPECT_EQ(r.exit_code, 2) << r;
    EXPECT_TRUE(r.out.empty()) << r;
    EXPECT_THAT(r.err, HasSubstr(expected[i])) << r;
  }
}

}  // namespace
