#include "nnergy/network/power_limit.h"

#include <gtest/gtest.h>

#include "nnergy/core/error.h"
#include "nnergy/device/device_catalog.h"
#include "nnergy/graph/onnx_importer.h"
#include "nnergy/graph/zoo.h"
#include "nnergy/predict/analytical_predictor.h"

namespace nnergy::network {
namespace {

const std::filesystem::path kDataDir = NNERGY_TEST_DATA_DIR;

struct Fixture {
  device::DeviceSpec device =
      device::DeviceCatalog::load(kDataDir / "devices.json").find("a100-40gb");
  graph::Network net = graph::import_onnx(graph::resolve_model("resnet18", kDataDir), {32, {}});
  CostedNetwork costed{net};
  predict::AnalyticalPredictor model{device};
  PredictionSettings settings;
  std::vector<double> clocks = device.supported_clocks_mhz();

  double power_at(double clock_mhz) {
    PredictionSettings s = settings;
    s.point.clock_mhz = clock_mhz;
    return predict_network(costed, model, s).totals.power_w;
  }
  PowerLimitedClock limit(double w) {
    return clock_under_power_limit(costed, model, settings, clocks, w);
  }
};

TEST(PowerLimit, TheClockIsTheHighestWhosePowerFitsUnderTheLimit) {
  Fixture f;
  const double boost_w = f.power_at(f.device.clock.boost_mhz);
  // A limit between the powers of two neighbouring clocks picks the lower one.
  const std::size_t k = f.clocks.size() / 2;
  const double limit = 0.5 * (f.power_at(f.clocks[k]) + f.power_at(f.clocks[k + 1]));
  const PowerLimitedClock l = f.limit(limit);
  EXPECT_TRUE(l.binding);
  EXPECT_TRUE(l.met);
  EXPECT_EQ(l.clock_mhz, f.clocks[k]);
  EXPECT_DOUBLE_EQ(l.unlimited_power_w, boost_w);
  EXPECT_LE(f.power_at(l.clock_mhz), limit);
}

TEST(PowerLimit, ALimitAboveTheBoostPowerLeavesTheBoostClock) {
  Fixture f;
  const PowerLimitedClock l = f.limit(f.device.tdp_w);
  EXPECT_FALSE(l.binding);
  EXPECT_EQ(l.clock_mhz, f.device.clock.boost_mhz);
}

TEST(PowerLimit, ALimitNoClockMeetsEndsAtTheLowestClockAndSaysSo) {
  Fixture f;
  const PowerLimitedClock l = f.limit(1);
  EXPECT_FALSE(l.met);
  EXPECT_EQ(l.clock_mhz, f.clocks.front());
  EXPECT_THROW(clock_under_power_limit(f.costed, f.model, f.settings, {}, 100), InvalidInput);
}

}  // namespace
}  // namespace nnergy::network
