// End-to-end runs of `nnergy archline`: exit codes, outputs and the user-catalog round trip.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "nnergy_runner.h"
#include "temp_dir_test.h"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using nnergy::cli_test::read_file;
using nnergy::cli_test::run_nnergy;
using nnergy::cli_test::RunResult;

class ArchlineCli : public nnergy::test_support::TempDirTest {
 protected:
  // Runs nnergy with `args`; the user catalog is dir_/user-devices.json.
  RunResult run(const std::vector<std::string>& args) const {
    return run_nnergy(args, {"NNERGY_USER_DEVICES=" + user_catalog().string()});
  }

  fs::path user_catalog() const { return dir_ / "user-devices.json"; }

  // Writes an archline CSV with the standard header and `rows`.
  fs::path write_csv(const std::string& name, const std::string& header,
                     const std::string& rows) const {
    const fs::path path = dir_ / name;
    std::ofstream(path) << "# kind: test\n" << header << "\n" << rows;
    return path;
  }
};

const char* kHeader =
    "benchmark,precision,occupancy,intensity_flop_per_byte,flop_count,bytes,time_s,energy_j,"
    "power_mean_w,sm_clock_mhz,memory_clock_mhz,throttle_reasons,admitted";

TEST_F(ArchlineCli, ShowReproducesTable7ForTheA100) {
  const RunResult r = run({"archline", "show", "a100-40gb", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r;
  const json j = json::parse(r.out);
  const json& fp32 = j["archline"]["fp32"];
  // Seed 003 Table 7: π_flop 121.0 W, π_mem 145.8 W, η_flop 55.14 %.
  EXPECT_NEAR(fp32["pi_flop_w"].get<double>(), 121.0, 0.6);
  EXPECT_NEAR(fp32["pi_mem_w"].get<double>(), 145.8, 0.7);
  EXPECT_NEAR(fp32["flop_efficiency_percent"].get<double>(), 55.14, 0.05);
  EXPECT_NEAR(j["archline"]["fp64"]["flop_efficiency_percent"].get<double>(), 59.24, 0.05);
  const RunResult text = run({"archline", "show", "a100-40gb"});
  ASSERT_EQ(text.exit_code, 0) << text;
  EXPECT_NE(text.out.find("η_flop flop energy efficiency [%]"), std::string::npos) << text;
}

// Without the kernels, or with them and no GPU (CI), `run` is a device error and writes nothing.
TEST_F(ArchlineCli, RunWithoutKernelsOrGpuExitsThree) {
#ifdef NNERGY_HAVE_CUDA_KERNELS
  if (fs::exists("/dev/nvidia0")) GTEST_SKIP() << "a GPU is present: run would measure it";
#endif
  const RunResult r =
      run({"archline", "run", "--gpu", "cuda:0", "--out", (dir_ / "run.csv").string()});
  EXPECT_EQ(r.exit_code, 3) << r;
#ifdef NNERGY_HAVE_CUDA_KERNELS
  // No driver (CI), or a driver and no device.
  EXPECT_TRUE(r.err.find("GPU cuda:0: no usable GPU") != std::string::npos ||
              r.err.find("0 CUDA device(s)") != std::string::npos)
      << r;
#else
  EXPECT_NE(r.err.find("built without CUDA kernels"), std::string::npos) << r;
#endif
  EXPECT_FALSE(fs::exists(dir_ / "run.csv"));
}

TEST_F(ArchlineCli, SynthFitPlotAndSaveDeviceEndToEnd) {
  const fs::path points = dir_ / "pts.csv";
  const RunResult synth =
      run({"archline", "synth", "--device", "a100-40gb", "--precision", "fp32,fp64", "--noise",
           "0.02", "--seed", "4", "--out", points.string()});
  ASSERT_EQ(synth.exit_code, 0) << synth;
  EXPECT_EQ(read_file(points).rfind("# tool: nnergy", 0), 0u);

  const RunResult fit = run({"archline", "fit", points.string(), "--json"});
  ASSERT_EQ(fit.exit_code, 0) << fit;
  const json j = json::parse(fit.out);
  const json& p32 = j["fits"]["fp32"]["parameters"];
  // Table 6 truth: 6.21 pJ/flop, 93.48 pJ/B, 98.42 W; 2 % noise recovers them within 3 %.
  constexpr double kRecovery = 0.03;
  EXPECT_NEAR(p32["eps_flop_pj"]["value"].get<double>(), 6.21, 6.21 * kRecovery);
  EXPECT_NEAR(p32["eps_mem_pj_per_byte"]["value"].get<double>(), 93.48, 93.48 * kRecovery);
  EXPECT_NEAR(p32["pi0_w"]["value"].get<double>(), 98.42, 98.42 * kRecovery);
  EXPECT_LT(p32["pi0_w"]["ci_low"].get<double>(), p32["pi0_w"]["value"].get<double>());
  EXPECT_GT(j["fits"]["fp32"]["r_squared"].get<double>(), 0.99);
  EXPECT_NEAR(j["fits"]["fp64"]["parameters"]["eps_flop_pj"]["value"].get<double>(), 14.33,
              14.33 * kRecovery);
  EXPECT_EQ(j["fits"]["fp32"]["peaks_from"], "catalog device a100-40gb");
  // Generated points are never called measured.
  EXPECT_EQ(j["fits"]["fp32"]["points_origin"], "synthetic");

  const fs::path svg = dir_ / "pts.svg";
  const RunResult plot = run({"archline", "plot", points.string(), "--out", svg.string()});
  ASSERT_EQ(plot.exit_code, 0) << plot;
  const std::string svg_text = read_file(svg);
  EXPECT_NE(svg_text.find("arithmetic intensity I [flop/B]"), std::string::npos);
  EXPECT_NE(svg_text.find("fp64: powerline"), std::string::npos);
  EXPECT_NE(svg_text.find("synthetic, occupancy 100 %"), std::string::npos);
  EXPECT_EQ(svg_text.find("measured, occupancy"), std::string::npos);

  // --save-device writes the user catalog (NNERGY_USER_DEVICES), and predict uses the entry.
  const RunResult save =
      run({"archline", "fit", points.string(), "--precision", "fp32", "--save-device", "lab-a100"});
  ASSERT_EQ(save.exit_code, 0) << save;
  const json catalog = json::parse(read_file(user_catalog()));
  ASSERT_EQ(catalog["devices"].size(), 1u);
  const double saved_eps_flop = catalog["devices"][0]["archline"]["fp32"]["eps_flop_pj"];
  EXPECT_NEAR(saved_eps_flop, p32["eps_flop_pj"]["value"].get<double>(), 1e-9);

  const RunResult devices = run({"devices", "lab-a100", "--json"});
  ASSERT_EQ(devices.exit_code, 0) << devices;
  EXPECT_NEAR(json::parse(devices.out)["archline"]["fp32"]["eps_flop_pj"].get<double>(),
              saved_eps_flop, 1e-9);
  const RunResult predict_lab = run({"predict", "resnet18", "--device", "lab-a100", "--json"});
  ASSERT_EQ(predict_lab.exit_code, 0) << predict_lab;
  const RunResult predict_base = run({"predict", "resnet18", "--device", "a100-40gb", "--json"});
  ASSERT_EQ(predict_base.exit_code, 0) << predict_base;
  // Same peaks (copied from a100-40gb), so the same time; different archline parameters, so a
  // different energy.
  const json lab = json::parse(predict_lab.out)["totals"];
  const json base = json::parse(predict_base.out)["totals"];
  EXPECT_NEAR(lab["time_s"].get<double>(), base["time_s"].get<double>(),
              1e-12 * base["time_s"].get<double>());
  EXPECT_GT(std::fabs(lab["energy_j"].get<double>() / base["energy_j"].get<double>() - 1), 1e-6);
}

// The H100 sweep of data/measured/h100 was taken with a flop kernel that did no arithmetic
// (its points report tens of PFLOP/s); fit must exclude them against the catalog peak and say
// why, and the remaining points give the fit of data/measured/h100/README.md.
TEST_F(ArchlineCli, FitExcludesPointsAboveTheDevicePeak) {
  const fs::path csv = fs::path(NNERGY_TEST_DATA_DIR) / "measured/h100/archline_h100_sxm.csv";
  const RunResult fit = run({"archline", "fit", csv.string(), "--precision", "fp32", "--json"});
  ASSERT_EQ(fit.exit_code, 0) << fit;
  const json j = json::parse(fit.out)["fits"]["fp32"];
  ASSERT_FALSE(j["warnings"].empty());
  EXPECT_NE(j["warnings"][0].get<std::string>().find("5 points excluded because their flop rate"),
            std::string::npos)
      << j["warnings"];
  // Measured H100 SXM fp32 (roofline, copy and baseline points): 5.91 pJ/flop [5.80, 6.02],
  // 128.9 pJ/B, 150.7 W; the tolerances are a little wider than the 95 % intervals.
  EXPECT_NEAR(j["parameters"]["eps_flop_pj"]["value"].get<double>(), 5.91, 0.15);
  EXPECT_NEAR(j["parameters"]["eps_mem_pj_per_byte"]["value"].get<double>(), 128.9, 4.0);
  EXPECT_NEAR(j["parameters"]["pi0_w"]["value"].get<double>(), 150.7, 5.0);
}

TEST_F(ArchlineCli, BadInputExitsTwo) {
  struct Case {
    const char* name;
    std::string header;
    std::string rows;
    const char* message;
  };
  const std::string one_intensity = [] {
    std::string rows;
    for (int i = 1; i <= 6; ++i) {
      const double t = 2.0 + 0.3 * i;
      rows += "roofline,fp32,1,4," + std::to_string(4e12 * t) + "," + std::to_string(1e12 * t) +
              "," + std::to_string(t) + "," + std::to_string(300 * t + i) + ",,,,0,1\n";
    }
    return rows;
  }();
  const std::vector<Case> cases = {
      {"missing.csv", "benchmark,precision,flop_count,time_s", "roofline,fp32,1,1\n",
       "missing column(s) byte_count, energy_j"},
      {"negative.csv", kHeader, "roofline,fp32,1,4,-4e12,1e12,2,500,,,,0,1\n", "W = -4e+12"},
      {"zero_time.csv", kHeader, "roofline,fp32,1,4,4e12,1e12,0,500,,,,0,1\n", "T = 0"},
      {"zero_q.csv", kHeader, "roofline,fp32,1,4,4e12,0,2,500,,,,0,1\n", "W > 0 and Q > 0"},
      {"few.csv", kHeader,
       "roofline,fp32,1,4,4e12,1e12,2,500,,,,0,1\nroofline,fp32,1,8,8e12,1e12,2,600,,,,0,1\n"
       "baseline,fp32,1,inf,0,0,2,200,,,,0,1\n",
       "expected at least 4 points"},
      {"one_intensity.csv", kHeader, one_intensity, "rank-deficient"},
  };
  for (const Case& c : cases) {
    const fs::path path = write_csv(c.name, c.header, c.rows);
    const RunResult r = run({"archline", "fit", path.string()});
    EXPECT_EQ(r.exit_code, 2) << c.name << "\n" << r;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << c.name << "\n" << r;
    EXPECT_NE(r.err.find(c.name), std::string::npos) << c.name << "\n" << r;
    EXPECT_TRUE(r.out.empty()) << c.name << "\n" << r;
  }
  const RunResult unknown = run({"archline", "show", "no-such-gpu"});
  EXPECT_EQ(unknown.exit_code, 2) << unknown;
  const RunResult precision = run({"archline", "show", "a100-40gb", "--precision", "fp16"});
  EXPECT_EQ(precision.exit_code, 2) << precision;
  const RunResult no_base =
      run({"archline", "fit", write_csv("ok.csv", kHeader, one_intensity).string(), "--save-device",
           "x"});
  EXPECT_EQ(no_base.exit_code, 2) << no_base;
}

}  // namespace
