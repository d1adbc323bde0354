// End-to-end tests of `nnergy kernel gemm`: the JSON keys tools read, a long GEMM on a B200
// at its power limit, and the refusals (exit 2, one line on stderr, nothing on stdout).
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
  };
  const std::vector<std::string> expected = {
      "--m 0", "--m 1000000000000", "it runs: fp32", "--precision fp9", "--engine tgi",
      "h1000", "--clock",           "conv"};
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const RunResult r = run_nnergy(cases[i]);
    EXPECT_EQ(r.exit_code, 2) << r;
    EXPECT_TRUE(r.out.empty()) << r;
    EXPECT_THAT(r.err, HasSubstr(expected[i])) << r;
  }
}

}  // namespace
