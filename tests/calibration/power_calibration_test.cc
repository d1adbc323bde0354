#include "nnergy/calibration/power_calibration.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>

#include "nnergy/calibration/time_calibration.h"
#include "nnergy/core/error.h"
#include "nnergy/graph/onnx_importer.h"
#include "nnergy/graph/zoo.h"
#include "nnergy/network/network_prediction.h"
#include "nnergy/network/time_evaluation.h"
#include "nnergy/predict/analytical_predictor.h"
#include "nnergy/published/published_measurement.h"

namespace nnergy::calibration {
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
  return network::predict_network(costed, analytical, settings).totals.power_w;
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
  const PowerCalibration c = calibrate_power(synthetic(0.3), catalog(), {});
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
  EXPECT_EQ(calibrate_power(ms, catalog(), {}).fit.operand_share, 0);
}

TEST(PowerCalibration, AMeasurementThatCannotBePredictedIsNamedNotDropped) {
  std::vector<PowerMeasurement> ms = synthetic(0.3);
  ms[0].run.model = "/nonexistent/model.onnx";
  ms[1].measured_w = 0;
  const PowerCalibration c = calibrate_power(ms, catalog(), {});
  ASSERT_EQ(c.failures.size(), 2u);
  EXPECT_EQ(c.failures[0].first, "resnet18");
  EXPECT_NE(c.failures[1].second.find("not positive"), std::string::npos);
  EXPECT_EQ(c.fit.records, 1u);
  // Nothing at all to fit on: no records, κ 0.
  EXPECT_EQ(calibrate_power({}, catalog(), {}).fit.records, 0u);
}

TEST(PublishedPowers, TheCorpusPowersTakeTheBatchTheirSourceRanAndSaySo) {
  const auto read =
      published::read_published_measurements((kDataDir / "calibration" / "measured_public.json"));
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

// A record of the H100 campaign's format (data/measured/h100/networks.json): one run of
// `network` at batch 8, inference, fp32 unless changed.
published::PublishedMeasurement h100_record(const std::string& id, const std::string& network,
                                            const std::string& quantity, double value_si,
                                            const std::string& unit_si) {
  published::PublishedMeasurement r;
  r.id = id;
  r.source = "tests/learn";
  r.gpu = "NVIDIA H100 80GB HBM3";
  r.network = network;
  r.mode = "inference";
  r.batch = 8;
  r.precision = "fp32 (strict: TensorFloat-32 disabled in cuDNN and cuBLAS)";
  r.framework = "PyTorch eager";
  r.quantity = quantity;
  r.value = value_si;
  r.unit = unit_si;
  r.value_si = value_si;
  r.unit_si = unit_si;
  r.grade = "A";
  return r;
}

using Reasons = std::vector<std::pair<std::string, std::string>>;

TEST(PublishedFigures, AZooNameOutsideNetworksJsonMapsToTheZooFile) {
  const std::vector<published::PublishedMeasurement> records = {
      h100_record("zoo", "convnext_base", "time_per_iteration", 0.01, "s"),
      h100_record("seq", "bert_base", "time_per_iteration", 0.01, "s"),
      h100_record("mapped", "resnext50_32x4d", "time_per_iteration", 0.01, "s"),
      h100_record("neither", "no_such_network", "time_per_iteration", 0.01, "s")};
  const PublishedTimes times = published_times(records, kDataDir, {"A"});
  ASSERT_EQ(times.measurements.size(), 3u);
  const network::NetworkTimeMeasurement& zoo = times.measurements[0];
  EXPECT_EQ(zoo.model, kDataDir / "zoo" / "convnext_base.onnx");
  EXPECT_EQ(zoo.bindings.batch, 8);  // the record's batch
  EXPECT_TRUE(zoo.bindings.named.empty());
  EXPECT_EQ(zoo.device_id, "h100-sxm");
  EXPECT_EQ(zoo.network, "convnext_base");
  // bert_base: the zoo's default sequence length (seq = 128), as `nnergy predict bert_base`.
  EXPECT_EQ(times.measurements[1].model, kDataDir / "zoo" / "bert_base.onnx");
  const graph::Network bert =
      graph::import_onnx(times.measurements[1].model, times.measurements[1].bindings);
  const auto input_ids =
      std::find_if(bert.tensors().begin(), bert.tensors().end(),
                   [](const graph::TensorInfo& t) { return t.name == "input_ids"; });
  ASSERT_NE(input_ids, bert.tensors().end());
  EXPECT_EQ(input_ids->shape, (graph::Shape{8, 128}));
  // A key of networks.json keeps its own file.
  EXPECT_EQ(times.measurements[2].model,
            kDataDir / "calibration" / "networks" / "resnext50_32x4d.onnx");
  EXPECT_EQ(times.skipped,
            (Reasons{{"neither", "network not in data/calibration/networks.json nor a zoo name"}}));
}

TEST(PublishedTimes, HowASourceTimedItsRunsComesFromTheRecordAndProtocolsJson) {
  published::PublishedMeasurement copied =
      h100_record("copied", "resnet18", "time_per_iteration", 0.01, "s");
  copied.source = "github:ryujaehun/pytorch-gpu-benchmark (results/x.csv @3f47a9e)";
  published::PublishedMeasurement cudnn4 = copied;
  cudnn4.id = "cudnn4";
  cudnn4.source = "github:jcjohnson/cnn-benchmarks (README.md @83d441f)";
  cudnn4.framework = "Torch7 (Lua) + cuDNN 4.0.07";
  published::PublishedMeasurement cudnn50 = cudnn4;
  cudnn50.id = "cudnn50";
  cudnn50.framework = "Torch7 (Lua) + cuDNN 5.0.05";
  published::PublishedMeasurement cudnn51 = cudnn4;
  cudnn51.id = "cudnn51";
  cudnn51.framework = "Torch7 (Lua) + cuDNN 5.1.10";
  published::PublishedMeasurement on_dgx = copied;
  on_dgx.id = "on_dgx";
  on_dgx.gpu = "NVIDIA A100-SXM4-40GB (DGX A100)";
  const PublishedTimes times =
      published_times({copied, cudnn4, cudnn50, cudnn51, on_dgx}, kDataDir, {"A"});
  ASSERT_EQ(times.measurements.size(), 5u);
  // data/calibration/protocols.json: this source's timed loop copies the batch to the GPU.
  EXPECT_TRUE(times.measurements[0].input_copied);
  EXPECT_TRUE(times.measurements[0].eager_pytorch);                          // "PyTorch eager"
  EXPECT_EQ(times.measurements[0].winograd, network::WinogradPasses::kAll);  // no version named
  EXPECT_FALSE(times.measurements[1].input_copied);
  EXPECT_FALSE(times.measurements[1].eager_pytorch);  // Torch7: no autograd dispatch
  EXPECT_EQ(times.measurements[1].winograd, network::WinogradPasses::kNone);
  EXPECT_EQ(times.measurements[2].winograd, network::WinogradPasses::kForward);
  EXPECT_EQ(times.measurements[3].winograd, network::WinogradPasses::kAll);
  // protocols.json names the machine the source's A100 ran on; its other GPUs ran on their own.
  EXPECT_EQ(times.measurements[4].device_id, "a100-40gb");
  EXPECT_EQ(times.measurements[4].host, "DGX A100");
  EXPECT_EQ(times.measurements[0].host, "");
  EXPECT_EQ(host_of(times.measurements[0]), "github:ryujaehun/pytorch-gpu-benchmark on h100-sxm");
}

TEST(PublishedTimes, ALatencyOfARunWhoseThroughputIsPublishedIsSkippedNamingTheThroughput) {
  // protocols.json: NVIDIA's examples publish a run's throughput and latency; the throughput is
  // scored, the latency (which also times the evaluation loop) is skipped.
  published::PublishedMeasurement throughput =
      h100_record("thr", "resnet50", "throughput", 1600, "samples/s");
  throughput.source = "github:NVIDIA/DeepLearningExamples (resnet50v1.5/README.md @729963dd)";
  published::PublishedMeasurement latency = throughput;
  latency.id = "lat";
  latency.quantity = "latency_avg_per_batch";
  latency.value_si = 0.0061;
  latency.unit_si = "s";
  published::PublishedMeasurement other_batch = latency;  // no throughput of its run: scored
  other_batch.id = "lat16";
  other_batch.batch = 16;
  const PublishedTimes times = published_times({latency, throughput, other_batch}, kDataDir, {"A"});
  ASSERT_EQ(times.measurements.size(), 2u);
  EXPECT_EQ(times.measurements[0].id, "thr");
  EXPECT_DOUBLE_EQ(times.measurements[0].measured_s, 8.0 / 1600);
  EXPECT_EQ(times.measurements[1].id, "lat16");
  ASSERT_EQ(times.skipped.size(), 1u);
  EXPECT_EQ(times.skipped[0].first, "lat");
  EXPECT_EQ(times.skipped[0].second.rfind("latency_avg_per_batch of a run whose throughput is "
                                          "published too, which is scored instead: ",
                                          0),
            0u)
      << times.skipped[0].second;
}

TEST(PublishedBandwidths, CopyKernelBandwidthsOfCatalogGpusBecomeAnchorsAndTheRestAreNamed) {
  published::PublishedMeasurement copy = h100_record(
      "copy", "memory copy kernel", "achieved_fraction_of_peak_bandwidth", 0.87, "fraction");
  copy.gpu = "NVIDIA A100 SXM4 40GB";
  copy.grade = "C";
  published::PublishedMeasurement roofline = copy;  // another kernel: not a streaming copy
  roofline.id = "roofline";
  roofline.network = "roofline kernel";
  published::PublishedMeasurement unknown_gpu = copy;
  unknown_gpu.id = "unknown";
  unknown_gpu.gpu = "NVIDIA GeForce 256";
  published::PublishedMeasurement percent = copy;
  percent.id = "percent";
  percent.value_si = 87;
  percent.unit_si = "%";
  const PublishedBandwidths b =
      published_bandwidths({copy, roofline, unknown_gpu, percent}, kDataDir);
  ASSERT_EQ(b.anchors.size(), 1u);
  EXPECT_EQ(b.anchors[0].id, "copy");
  EXPECT_EQ(b.anchors[0].device_id, "a100-40gb");
  EXPECT_DOUBLE_EQ(b.anchors[0].fraction, 0.87);
  EXPECT_EQ(b.skipped,
            (Reasons{{"unknown", "GPU 'NVIDIA GeForce 256' is not in the device catalog"},
                     {"percent", "expected a fraction in (0, 1] of the datasheet bandwidth"}}));
}

// A data directory like the project's, with `protocols` as its protocols.json; one per test and
// process (ctest runs the tests of this file in parallel processes).
std::filesystem::path data_dir_with_protocols(const std::string& protocols) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() /
      ("nnergy-protocols-" +
       std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) + "-" +
       std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir / "calibration");
  for (const char* name : {"gpus.json", "networks.json", "assumed_batches.json", "layer_ops.json"})
    std::filesystem::copy_file(kDataDir / "calibration" / name, dir / "calibration" / name);
  std::filesystem::create_directory_symlink(kDataDir / "calibration" / "networks",
                                            dir / "calibration" / "networks");
  std::filesystem::create_directory_symlink(kDataDir / "zoo", dir / "zoo");
  std::ofstream(dir / "calibration" / "protocols.json") << protocols;
  return dir;
}

TEST(PublishedTimes, AOneFigurePerRunEntryWithoutAListOfQuantitiesIsNamedWithItsFile) {
  const std::filesystem::path dir = data_dir_with_protocols(
      R"({"sources": {"github:NVIDIA/DeepLearningExamples": {"one_figure_per_run": ["throughput"]}}})");
  published::PublishedMeasurement r = h100_record("r", "resnet18", "throughput", 100, "samples/s");
  r.source = "github:NVIDIA/DeepLearningExamples (README.md @729963dd)";
  try {
    published_times({r}, dir, {"A"});
    ADD_FAILURE() << "no error";
  } catch (const InvalidInput& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("protocols.json: sources.github:NVIDIA/DeepLearningExamples."
                        "one_figure_per_run: expected {\"quantities\": [quantity names"),
              std::string::npos)
        << what;
  }
  std::filesystem::remove_all(dir);
}

TEST(PublishedTimes, AHostsEntryThatIsNotAnObjectOfNamesIsNamedWithItsFile) {
  // A protocols.json whose hosts map a GPU to a number.
  const std::filesystem::path dir = data_dir_with_protocols(
      R"({"sources": {"github:ryujaehun/pytorch-gpu-benchmark": {"hosts": {"h100-sxm": 7}}}})");
  published::PublishedMeasurement r = h100_record("r", "resnet18", "time_per_iteration", 0.01, "s");
  r.source = "github:ryujaehun/pytorch-gpu-benchmark (results/x.csv @3f47a9e)";
  try {
    published_times({r}, dir, {"A"});
    ADD_FAILURE() << "no error";
  } catch (const InvalidInput& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("protocols.json: sources.github:ryujaehun/pytorch-gpu-benchmark.hosts: "
                        "expected an object of GPU id → host machine name"),
              std::string::npos)
        << what;
  }
  std::filesystem::remove_all(dir);
}

TEST(PublishedFigures, TheH100CampaignsPrecisionsAndModesMap) {
  std::vector<published::PublishedMeasurement> records;
  for (const char* precision :
       {"fp32 (strict: TensorFloat-32 disabled in cuDNN and cuBLAS)",
        "tf32 (torch.backends.cudnn/cuda.matmul.allow_tf32 = True)",
        "bf16 (weights and activations)", "bf16 autocast (fp32 weights, torch.autocast)"}) {
    records.push_back(h100_record(precision, "resnet50", "time_per_iteration", 0.01, "s"));
    records.back().precision = precision;
  }
  records.back().mode = "training";
  const PublishedTimes times = published_times(records, kDataDir, {"A"});
  ASSERT_EQ(times.measurements.size(), 4u) << times.skipped.front().second;
  std::vector<device::Precision> precisions;
  for (const auto& m : times.measurements) {
    EXPECT_EQ(m.device_id, "h100-sxm");
    precisions.push_back(m.precision);
  }
  EXPECT_EQ(precisions,
            (std::vector<device::Precision>{device::Precision::kFp32, device::Precision::kTf32,
                                            device::Precision::kBf16, device::Precision::kBf16}));
  EXPECT_EQ(times.measurements[3].mode, graph::Mode::kTraining);
  EXPECT_TRUE(times.measurements[3].optimizer_step);
}

TEST(PublishedFigures, PowersAndEnergiesAreRunsOtherQuantitiesAndBadValuesAreSkipped) {
  std::vector<published::PublishedMeasurement> records = {
      h100_record("t", "resnet18", "time_per_iteration", 2e-3, "s"),
      h100_record("p", "resnet18", "avg_power", 400, "W"),
      h100_record("e", "resnet18", "energy_per_iteration", 0.8, "J"),
      h100_record("u", "resnet18", "max_observed_power", 500, "W"),
      h100_record("negative", "resnet18", "avg_power", -1, "W"),
      h100_record("zero", "resnet18", "energy_per_iteration", 0, "J"),
      h100_record("kw", "resnet18", "avg_power", 0.4, "kW")};
  const PublishedFigures f = published_figures(records, kDataDir, {"A"});
  ASSERT_EQ(f.times.size(), 1u);
  ASSERT_EQ(f.powers.size(), 1u);
  ASSERT_EQ(f.energies.size(), 1u);
  EXPECT_EQ(f.powers[0].measured_w, 400);
  EXPECT_EQ(f.energies[0].measured_j, 0.8);
  // The same run as the time, but for its id and measured time.
  network::NetworkTimeMeasurement run = f.powers[0].run;
  run.id = "t";
  run.measured_s = 2e-3;
  EXPECT_EQ(run.model, f.times[0].model);
  EXPECT_EQ(run.device_id, f.times[0].device_id);
  EXPECT_EQ(run.bindings.batch, f.times[0].bindings.batch);
  EXPECT_EQ(run.precision, f.times[0].precision);
  EXPECT_EQ(run.mode, f.times[0].mode);
  EXPECT_EQ(f.skipped,
            (Reasons{{"u",
                      "quantity 'max_observed_power' is not a whole-network time, average power "
                      "or energy per iteration"},
                     {"negative", "no positive SI value"},
                     {"zero", "no positive SI value"},
                     {"kw", "avg_power given in 'kW', expected 'W'"}}));
  // Each quantity's own view: times skip the others as before; powers and energies ignore them.
  const PublishedTimes times = published_times(records, kDataDir, {"A"});
  EXPECT_EQ(times.measurements.size(), 1u);
  EXPECT_EQ(times.skipped.size(), 6u);
  EXPECT_EQ(times.skipped[0],
            std::make_pair(std::string("p"), std::string("quantity 'avg_power' is not a "
                                                         "whole-network time")));
  const PublishedPowers powers = published_powers(records, kDataDir, {"A"});
  EXPECT_EQ(powers.measurements.size(), 1u);
  EXPECT_EQ(powers.skipped, (Reasons{{"negative", "no positive SI value"},
                                     {"kw", "avg_power given in 'kW', expected 'W'"}}));
  const PublishedEnergies energies = published_energies(records, kDataDir, {"A"});
  EXPECT_EQ(energies.measurements.size(), 1u);
  EXPECT_EQ(energies.skipped, (Reasons{{"zero", "no positive SI value"}}));
}

TEST(EvaluatePowers, PowerAndEnergyAreThoseOfPredictNetworkForTheRun) {
  // The calibrated catalog, as `nnergy evaluate` and `nnergy predict` use it.
  const device::DeviceCatalog calibrated = device::DeviceCatalog::load_with_user(kDataDir, "");
  const std::vector<published::PublishedMeasurement> records = {
      h100_record("t", "resnet18", "time_per_iteration", 2e-3, "s"),
      h100_record("p", "resnet18", "avg_power", 400, "W"),
      h100_record("e", "resnet18", "energy_per_iteration", 0.8, "J")};
  const PublishedFigures f = published_figures(records, kDataDir, {"A"});
  constexpr double kHostLaunchS = 50e-6;
  const PowerEvaluation e = evaluate_powers(
      f.powers, f.energies, calibrated, network::TimeEvaluationSettings::same_host(kHostLaunchS));
  ASSERT_TRUE(e.failures.empty()) << e.failures.front().second;
  ASSERT_EQ(e.powers.size(), 1u);
  ASSERT_EQ(e.energies.size(), 1u);

  // The same prediction made by hand, as `nnergy predict resnet18 --device h100-sxm --batch 8`.
  const device::DeviceSpec& h100 = calibrated.find("h100-sxm");
  EXPECT_GT(h100.power_activity.operand_share, 0) << "calibrated κ expected";
  graph::Network net = graph::import_onnx(kDataDir / "zoo" / "resnet18.onnx", {8, {}});
  net.cast_floating_tensors(device::storage_type(device::Precision::kFp32));
  const network::CostedNetwork costed(net);
  const predict::AnalyticalPredictor analytical(h100);
  network::PredictionSettings settings;
  settings.point = {device::Precision::kFp32, h100.clock.boost_mhz};
  settings.batch = 8;
  settings.host_launch_s = kHostLaunchS;
  const network::NetworkTotals t = network::predict_network(costed, analytical, settings).totals;
  // Same computation, same order: equal to rounding.
  constexpr double kRelative = 1e-12;
  EXPECT_NEAR(e.powers[0].predicted_w, t.power_w, kRelative * t.power_w);
  EXPECT_NEAR(e.powers[0].predicted_time_s, t.time_s, kRelative * t.time_s);
  EXPECT_LT(e.powers[0].archline_w, e.powers[0].predicted_w);  // κ adds power
  EXPECT_NEAR(e.powers[0].ratio(), t.power_w / 400, kRelative);
  EXPECT_NEAR(e.energies[0].predicted_j, t.energy_j, kRelative * t.energy_j);
  EXPECT_NEAR(e.energies[0].predicted_j, t.power_w * t.time_s, 1e-9 * t.energy_j);
  EXPECT_NEAR(e.energies[0].ratio(), t.energy_j / 0.8, kRelative);
  // The energy's time is the time evaluation's prediction of the same run.
  const network::TimeEvaluation times = network::evaluate_times(
      f.times, calibrated, network::TimeEvaluationSettings::same_host(kHostLaunchS));
  ASSERT_EQ(times.evaluated.size(), 1u);
  EXPECT_NEAR(e.energies[0].predicted_time_s, times.evaluated[0].predicted_s, 1e-9 * t.time_s);
}

TEST(EvaluatePowers, AMeasurementThatCannotBePredictedIsAFailureWithItsReason) {
  const std::vector<published::PublishedMeasurement> records = {
      h100_record("p", "resnet18", "avg_power", 400, "W"),
      h100_record("e", "resnet18", "energy_per_iteration", 0.8, "J")};
  PublishedFigures f = published_figures(records, kDataDir, {"A"});
  f.powers[0].measured_w = 0;
  f.energies[0].run.device_id = "no-such-gpu";
  const PowerEvaluation e = evaluate_powers(f.powers, f.energies, catalog(), {});
  EXPECT_TRUE(e.powers.empty());
  EXPECT_TRUE(e.energies.empty());
  ASSERT_EQ(e.failures.size(), 2u);
  EXPECT_EQ(e.failures[0],
            std::make_pair(std::string("p"), std::string("the measured power is not positive")));
  EXPECT_EQ(e.failures[1].first, "e");
  EXPECT_NE(e.failures[1].second.find("no-such-gpu"), std::string::npos) << e.failures[1].second;
}

}  // namespace
}  // namespace nnergy::calibration
