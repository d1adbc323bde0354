#include "nnergy/calibration/time_calibration.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "nnergy/graph/zoo.h"

namespace nnergy::calibration {
namespace {

using network::NetworkTimeMeasurement;
using network::TimedPart;

const std::filesystem::path kDataDir = NNERGY_TEST_DATA_DIR;

const device::DeviceCatalog& catalog() {
  static const device::DeviceCatalog c = device::DeviceCatalog::load(kDataDir / "devices.json");
  return c;
}

// Known parameters the synthetic measurements below are made from.
device::CalibratedParameters truth() {
  device::CalibratedParameters p;
  p.generations["Ampere"] = {0.7, 0.35, 0.6, 2020, 0, {"a100-40gb"}, 0};
  p.generations["Pascal"] = {0.8, std::nullopt, 0.75, 2017, 0, {"gtx-1080-ti"}, 0};
  p.kernel_overhead_s = 3e-6;
  p.work_half_flop_per_sm = 1e6;
  p.reduction_half = 8;
  p.host_launch_by_host["synthetic machine"] = 30e-6;
  p.host_launch_s = 30e-6;
  p.host_launch_training_factor = 1.5;
  p.input_copy_bytes_per_s = 5e9;
  p.convolution_time_scale = 1.4;
  return p;
}

// SYNTHETIC measurements: times the model itself predicts with truth(), on two generations,
// three networks, two batches, inference and training, fp32 and (on the A100) tf32.
network::PreparedTimes synthetic() {
  std::vector<NetworkTimeMeasurement> ms;
  for (const char* device : {"a100-40gb", "gtx-1080-ti"}) {
    for (const char* net : {"resnet18", "mobilenet_v2", "vgg16"}) {
      for (std::int64_t batch : {2, 32}) {
        for (graph::Mode mode : {graph::Mode::kInference, graph::Mode::kTraining}) {
          for (device::Precision precision : {device::Precision::kFp32, device::Precision::kTf32}) {
            if (precision == device::Precision::kTf32 && std::string(device) != "a100-40gb")
              continue;
            NetworkTimeMeasurement m;
            m.id = std::to_string(ms.size());
            m.source = "synthetic (made by the model)";
            m.network = net;
            m.device_id = device;
            m.model = graph::resolve_model(net, kDataDir);
            m.bindings.batch = batch;
            m.mode = mode;
            m.precision = precision;
            m.measured_s = 1;  // replaced below
            m.eager_pytorch = true;
            m.input_copied = batch == 2;
            m.host = "synthetic machine";
            ms.push_back(m);
          }
        }
      }
    }
  }
  network::PreparedTimes prepared = network::prepare_times(ms, catalog());
  EXPECT_TRUE(prepared.failures.empty());
  std::vector<std::size_t> all(prepared.measurements.size());
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
  const auto made = predict_with(prepared, all, catalog(), truth());
  for (std::size_t i = 0; i < all.size(); ++i)
    prepared.measurements[i].measured_s = made[i].predicted_s;
  return prepared;
}

std::vector<std::size_t> everything(const network::PreparedTimes& p) {
  std::vector<std::size_t> all(p.measurements.size());
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
  return all;
}

// Thresholds for the small synthetic corpus, whose host launch time is its one machine's.
CalibrationOptions synthetic_options() {
  CalibrationOptions options;
  options.min_generation_records = 5;
  options.min_tensor_records = 5;
  options.min_host_records = 5;
  options.host_launch_hosts = {"synthetic machine"};
  return options;
}

TEST(TimeCalibration, RecoversTheParametersSyntheticTimesWereMadeWith) {
  const network::PreparedTimes prepared = synthetic();
  CalibrationOptions options = synthetic_options();
  options.prior_weight = 1e-3;  // 36 noise-free times decide every parameter
  const TimeFit fit = fit_times(prepared, everything(prepared), catalog(), "synthetic", options);
  EXPECT_EQ(fit.fitted_records, prepared.measurements.size());
  // Noise-free data: the fit reproduces every time to well under 1 %, and the parameters to a
  // few per cent.
  EXPECT_LT(fit.rms_log_error, 0.01) << fit.iterations;
  const device::CalibratedParameters& p = fit.parameters;
  // tf32 convolutions on the A100 run through the kernel model: their stretch over the GEMMs
  // is fitted (the tensor η moves only the depthwise convolutions the roofline keeps).
  EXPECT_NEAR(p.convolution_time_scale, 1.4, 1.4 * 0.05);
  EXPECT_NEAR(p.generations.at("Pascal").compute, 0.8, 0.8 * 0.05);
  EXPECT_NEAR(p.host_launch_s, 30e-6, 30e-6 * 0.05);
  EXPECT_EQ(p.host_launch_source, "synthetic machine");
  EXPECT_NEAR(p.host_launch_training_factor, 1.5, 1.5 * 0.05);
  ASSERT_TRUE(p.input_copy_bytes_per_s.has_value());
  EXPECT_NEAR(*p.input_copy_bytes_per_s, 5e9, 5e9 * 0.05);
  EXPECT_EQ(p.generations.at("Ampere").devices, std::vector<std::string>{"a100-40gb"});
}

TEST(TimeCalibration, LeaveOneGpuOutTransfersAGenerationLeftWithoutMeasurements) {
  const network::PreparedTimes prepared = synthetic();
  CalibrationOptions options = synthetic_options();
  const auto held_out = cross_validate(
      prepared, catalog(), [](const NetworkTimeMeasurement& m) { return m.device_id; }, options, 2);
  ASSERT_EQ(held_out.size(), prepared.measurements.size());
  // Each GPU is alone in its generation: predicted from the other one's parameters, so not
  // exactly, but every time is a positive, finite prediction of its own measurement.
  for (const auto& t : held_out) {
    EXPECT_TRUE(std::isfinite(t.predicted_s) && t.predicted_s > 0) << t.measurement.id;
  }
}

TEST(TimeCalibration, TooFewMeasurementsOfAGenerationAreNamedNotFitted) {
  const network::PreparedTimes prepared = synthetic();
  CalibrationOptions options;  // 20 per generation: the GTX 1080 Ti has 12
  options.min_tensor_records = 5;
  options.min_host_records = 5;
  const TimeFit fit = fit_times(prepared, everything(prepared), catalog(), "synthetic", options);
  EXPECT_EQ(fit.parameters.generations.count("Pascal"), 0u);
  ASSERT_FALSE(fit.notes.empty());
  EXPECT_NE(fit.notes.front().find("Pascal: 12 measurements (fewer than 20), not fitted"),
            std::string::npos)
      << fit.notes.front();
}

TEST(TimeCalibration, AMachineTheFitDidNotSeeTakesItsSourcesOtherMachinesHostTime) {
  network::PreparedTimes prepared = synthetic();
  for (NetworkTimeMeasurement& m : prepared.measurements) m.host.clear();  // a machine per GPU
  const std::vector<std::size_t> all = everything(prepared);
  device::CalibratedParameters fitted = truth();
  fitted.host_launch_s = 10e-6;
  fitted.host_launch_by_host = {{"synthetic on gtx-1080-ti", 50e-6}};
  device::CalibratedParameters fifty = truth();
  fifty.host_launch_s = 50e-6;
  fifty.host_launch_by_host.clear();
  const auto with_fallback = predict_with(prepared, all, catalog(), fitted);
  const auto with_fifty = predict_with(prepared, all, catalog(), fifty);
  for (std::size_t i = 0; i < all.size(); ++i) {
    EXPECT_EQ(host_of(prepared.measurements[i]),
              "synthetic on " + prepared.measurements[i].device_id);
    EXPECT_DOUBLE_EQ(with_fallback[i].predicted_s, with_fifty[i].predicted_s) << i;
  }
  // Another source has no fitted machine: the default.
  for (NetworkTimeMeasurement& m : prepared.measurements) m.source = "elsewhere";
  device::CalibratedParameters ten = fifty;
  ten.host_launch_s = 10e-6;
  const auto other = predict_with(prepared, all, catalog(), fitted);
  const auto with_ten = predict_with(prepared, all, catalog(), ten);
  for (std::size_t i = 0; i < all.size(); ++i)
    EXPECT_DOUBLE_EQ(other[i].predicted_s, with_ten[i].predicted_s) << i;
}

TEST(TimeCalibration, AnAnchoredGenerationsMemoryEfficiencyIsDrawnTowardsItsCopyKernels) {
  const network::PreparedTimes prepared = synthetic();
  CalibrationOptions options = synthetic_options();
  options.bandwidth_anchor_sigma = 0.01;  // a tight prior: the anchor decides
  const std::vector<BandwidthAnchor> anchors = {{"copy1", "a100-40gb", 0.88},
                                                {"copy2", "a100-40gb", 0.92}};
  const TimeFit free = fit_times(prepared, everything(prepared), catalog(), "synthetic", options);
  const TimeFit anchored =
      fit_times(prepared, everything(prepared), catalog(), "synthetic", options, anchors);
  // The synthetic times were made with 0.6: free, the fit stays well below the anchors (these
  // few times identify it loosely); anchored, it sits at their mean. Pascal has no anchor and
  // stays where its times put it.
  EXPECT_LT(free.parameters.generations.at("Ampere").memory, 0.85);
  EXPECT_NEAR(anchored.parameters.generations.at("Ampere").memory, 0.9, 0.9 * 0.01);
  EXPECT_NEAR(anchored.parameters.generations.at("Pascal").memory,
              free.parameters.generations.at("Pascal").memory, 0.05);
  ASSERT_FALSE(anchored.notes.empty());
  EXPECT_EQ(anchored.notes.front(),
            "Ampere: memory efficiency drawn towards 90.0 %, the mean of 2 copy-kernel "
            "bandwidths measured on a100-40gb");
}

TEST(TimeCalibration, ACrossValidationFoldLeavesOutTheAnchorsOfTheGpusItHoldsOut) {
  const network::PreparedTimes prepared = synthetic();
  CalibrationOptions options = synthetic_options();
  options.bandwidth_anchor_sigma = 0.01;
  // A wrong anchor (the times were made with 0.6): used, it makes the A100's times wrong.
  const std::vector<BandwidthAnchor> wrong = {{"copy", "a100-40gb", 0.15}};
  const std::vector<std::size_t> all = everything(prepared);
  const TimeFit with_wrong = fit_times(prepared, all, catalog(), "synthetic", options, wrong);
  double worst_in_sample = 0;
  for (const auto& t : predict_with(prepared, all, catalog(), with_wrong.parameters)) {
    if (t.measurement.device_id == "a100-40gb")
      worst_in_sample = std::max(worst_in_sample, std::abs(std::log(t.ratio())));
  }
  EXPECT_GT(worst_in_sample, std::log(1.2));
  // Folds of one GPU and batch: a fold holding out A100 times fits the A100's other batch
  // without the anchor, exactly as if there were none.
  const auto by_gpu_and_batch = [](const NetworkTimeMeasurement& m) {
    return m.device_id + " batch " + std::to_string(*m.bindings.batch);
  };
  const auto held_out = cross_validate(prepared, catalog(), by_gpu_and_batch, options, 2, wrong);
  const auto unanchored = cross_validate(prepared, catalog(), by_gpu_and_batch, options, 2);
  ASSERT_EQ(held_out.size(), prepared.measurements.size());
  ASSERT_EQ(unanchored.size(), held_out.size());
  std::size_t a100 = 0;
  for (std::size_t k = 0; k < held_out.size(); ++k) {
    if (held_out[k].measurement.device_id != "a100-40gb") continue;
    ++a100;
    EXPECT_EQ(held_out[k].measurement.id, unanchored[k].measurement.id);
    EXPECT_DOUBLE_EQ(held_out[k].predicted_s, unanchored[k].predicted_s)
        << held_out[k].measurement.id;
  }
  EXPECT_EQ(a100, 24u);
}

TEST(TimeCalibration, SourceKeyIsTheTextBeforeTheParenthesis) {
  EXPECT_EQ(source_key("github:a/b (README.md @123)"), "github:a/b");
  EXPECT_EQ(source_key("plain"), "plain");
}

}  // namespace
}  // namespace nnergy::calibration
