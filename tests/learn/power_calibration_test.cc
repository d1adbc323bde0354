#include "nnergy/learn/power_calibration.h"

#include <gtest/gtest.h>

#include "nnergy/dataset/published_measurement.h"
#include "nnergy/graph/onnx_importer.h"
#include "nnergy/graph/zoo.h"
#include "nnergy/network/network_prediction.h"

namespace nnergy::learn {
namespace {

const std::filesystem::path kDataDir = NNERGY_TEST_DATA_DIR;

const device::DeviceCatalog& catalog() {
  static const device::DeviceCatalog c = device::DeviceCatalog::load(kDataDir / "devices.json");
  return c;
}

// SYNTHETIC average power: what the model itself predicts with operand share `kappa`.
double made_power(const network::NetworkTimeMeasurement& m, double kappa) {
  device::DeviceSpec device = catalog().find(m.device_id);
  device.power_activity.operand_share = kappa;
  graph::Network net = graph::import_onnx(m.model, m.bindings);
  const network::CostedNetwork costed(net);
  const predict::AnalyticalPredictor analytical(device);
  network::PredictionSettings settings;
  settings.mode = m.mode;
  settings.point = {m.precision, device.clock.boost_mhz};
  settings.batch = *m.bindings.batch;
  return network::predict_network(costed, analytical, analytical, settings).totals.power_w;
}

std::vector<PowerMeasurement> synthetic(double kappa) {
  std::vector<PowerMeasurement> out;
  for (const char* net : {"resnet18", "vgg16", "mobilenet_v2"}) {
    PowerMeasurement p;
    p.run.id = net;
    p.run.network = net;
    p.run.device_id = "titan-x";
    p.run.model = graph::resolve_model(net, kDataDir);
    p.run.bindings.batch = 16;
    p.measured_w = made_power(p.run, kappa);
    out.push_back(p);
  }
  return out;
}

TEST(PowerCalibration, RecoversTheOperandShareSyntheticPowersWereMadeWith) {
  const PowerCalibration c = calibrate_power(synthetic(0.3), catalog(), 0);
  EXPECT_TRUE(c.failures.empty());
  EXPECT_EQ(c.fit.records, 3u);
  EXPECT_EQ(c.fit.devices, std::vector<std::string>{"titan-x"});
  EXPECT_NEAR(c.fit.operand_share, 0.3, 1e-6);
  ASSERT_EQ(c.leave_one_network_out.size(), 3u);
  for (const EvaluatedPower& e : c.leave_one_network_out) {
    EXPECT_NEAR(e.ratio(), 1, 1e-6) << e.measurement.run.network;
    // The archline alone draws less: κ adds power while the units compute.
    EXPECT_LT(e.archline_w, e.measurement.measured_w) << e.measurement.run.network;
  }
  EXPECT_NEAR(c.fit.power_log_sigma, 0, 1e-6);
}

TEST(PowerCalibration, PowersBelowTheArchlineGiveZeroNotANegativeShare) {
  std::vector<PowerMeasurement> ms = synthetic(0);
  for (PowerMeasurement& m : ms) m.measured_w *= 0.8;
  EXPECT_EQ(calibrate_power(ms, catalog(), 0).fit.operand_share, 0);
}

TEST(PowerCalibration, AMeasurementThatCannotBePredictedIsNamedNotDropped) {
  std::vector<PowerMeasurement> ms = synthetic(0.3);
  ms[0].run.model = "/nonexistent/model.onnx";
  ms[1].measured_w = 0;
  const PowerCalibration c = calibrate_power(ms, catalog(), 0);
  ASSERT_EQ(c.failures.size(), 2u);
  EXPECT_EQ(c.failures[0].first, "resnet18");
  EXPECT_NE(c.failures[1].second.find("not positive"), std::string::npos);
  EXPECT_EQ(c.fit.records, 1u);
  // Nothing at all to fit on: no records, κ 0.
  EXPECT_EQ(calibrate_power({}, catalog(), 0).fit.records, 0u);
}

TEST(PublishedPowers, TheCorpusPowersTakeTheBatchTheirSourceRanAndSaySo) {
  const auto read =
      dataset::read_published_measurements((kDataDir / "calibration" / "measured_public.json"));
  const PublishedPowers powers = published_powers(read.records, kDataDir, {"A", "B"});
  ASSERT_EQ(powers.measurements.size(), 5u);
  ASSERT_EQ(powers.assumptions.size(), 5u);
  for (const PowerMeasurement& m : powers.measurements) {
    EXPECT_EQ(m.run.device_id, "titan-x");
    EXPECT_EQ(*m.run.bindings.batch, m.run.network == "VGG-16" ? 64 : 128) << m.run.network;
    EXPECT_GT(m.measured_w, 150);
  }
  EXPECT_NE(powers.assumptions[0].second.find("assumed"), std::string::npos);
  // The same records' times enter the time calibration with the same batches.
  const PublishedTimes times = published_times(read.records, kDataDir, {"A", "B"});
  EXPECT_EQ(times.assumptions.size(), 5u);
}

}  // namespace
}  // namespace nnergy::learn
