#include "nnergy/api/archline.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "nnergy/core/error.h"
#include "temp_dir_test.h"

namespace nnergy::api {
namespace {

using device::Precision;

class ApiArchline : public test_support::TempDirTest {};

TEST_F(ApiArchline, ShowListsBothVectorPrecisionsOfTheA100) {
  ArchlineShowRequest request;
  request.device = "a100-40gb";
  const report::ArchlineShowReport r = archline_show(request);
  ASSERT_EQ(r.columns.size(), 2u);
  EXPECT_EQ(r.columns[0].precision, Precision::kFp32);
  EXPECT_EQ(r.columns[1].precision, Precision::kFp64);
  // The published A100 fp32 parameters (README: 6.21 pJ/flop).
  EXPECT_NEAR(r.columns[0].model.eps_flop_j * 1e12, 6.21, 0.01);
}

TEST_F(ApiArchline, ATensorCorePrecisionIsRefusedByName) {
  try {
    ArchlineShowRequest request;
    request.device = "a100-40gb";
    request.precisions = {Precision::kFp16};
    archline_show(request);
    FAIL() << "no error";
  } catch (const InvalidInput& e) {
    EXPECT_THAT(e.what(), testing::StartsWith("precision=fp16: the archline kernels use the vector "
                                              "units; accepted: fp32, fp64"));
  }
}

// Checked before any GPU is touched, in the caller's spelling of the settings.
TEST_F(ApiArchline, RunRefusesAGpuThatIsNotAnOrdinalAndACatalogDeviceThatIs) {
  const auto message = [&](const std::string& gpu, const std::string& catalog_device,
                           SettingNames names) {
    ArchlineRunRequest request;
    request.gpu = gpu;
    if (!catalog_device.empty()) request.catalog_device = catalog_device;
    request.out = file("points.csv");
    request.names = names;
    try {
      archline_run(request);
    } catch (const InvalidInput& e) {
      return std::string(e.what());
    }
    return std::string("(no InvalidInput)");
  };
  EXPECT_EQ(message("gpu0", "", SettingNames::kKeyword),
            "gpu=gpu0: expected cuda:N or N, a CUDA device ordinal");
  EXPECT_EQ(message("cuda:x", "", SettingNames::kFlag),
            "--gpu cuda:x: expected cuda:N or N, a CUDA device ordinal");
  EXPECT_EQ(message("cuda:0", "cuda:1", SettingNames::kFlag),
            "--catalog-device cuda:1: expected a catalog id (see `nnergy devices`); the CUDA "
            "device to measure is --gpu cuda:1");
  EXPECT_FALSE(std::filesystem::exists(file("points.csv")));
}

TEST_F(ApiArchline, SyntheticPointsFitBackToTheirTruth) {
  ArchlineSynthRequest synth;
  synth.device = "a100-40gb";
  synth.out = dir_ / "points.csv";
  const report::ArchlineFileReport written = archline_synth(synth);
  EXPECT_GT(written.count, 10u);
  ASSERT_TRUE(std::filesystem::exists(dir_ / "points.csv"));
  ArchlineFitRequest request;
  request.file = dir_ / "points.csv";
  const report::ArchlineFitReport fit = archline_fit(request);
  ASSERT_EQ(fit.fits.size(), 1u);
  // 2 % noise recovers the published parameters within 3 % (6.21 pJ/flop, 93.48 pJ/B, 98.42 W).
  EXPECT_NEAR(fit.fits[0].result.energy.eps_flop_j.value * 1e12, 6.21, 6.21 * 0.03);
  EXPECT_NEAR(fit.fits[0].result.energy.eps_mem_j_per_byte.value * 1e12, 93.48, 93.48 * 0.03);
  EXPECT_NEAR(fit.fits[0].result.energy.pi0_w.value, 98.42, 98.42 * 0.03);
  EXPECT_EQ(fit.fits[0].peaks.source, "catalog device a100-40gb");

  const report::ArchlineFileReport plot = archline_plot(request, dir_ / "plot.svg");
  EXPECT_EQ(plot.count, 1u);
  EXPECT_TRUE(std::filesystem::exists(dir_ / "plot.svg"));
}

}  // namespace
}  // namespace nnergy::api
