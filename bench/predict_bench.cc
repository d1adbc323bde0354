// Wall time of the prediction pipeline: ONNX import, operator costs, per-layer prediction and the
// JSON report, for ResNet-50 and for the whole zoo. See README.md for the targets.
#include <benchmark/benchmark.h>

#include <filesystem>
#include <string>
#include <vector>

#include "nnergy/api/predict.h"
#include "nnergy/core/error.h"
#include "nnergy/device/device_catalog.h"
#include "nnergy/graph/onnx_importer.h"
#include "nnergy/graph/zoo.h"
#include "nnergy/network/clock_sweep.h"
#include "nnergy/network/network_prediction.h"
#include "nnergy/predict/analytical_predictor.h"
#include "nnergy/report/prediction_report.h"

namespace nnergy {
namespace {

namespace fs = std::filesystem;

constexpr std::int64_t kBatch = 32;

const fs::path& data_dir() {
  static const fs::path dir = NNERGY_BENCH_DATA_DIR;
  return dir;
}

// The built-in catalog only: a user catalog must not change what is measured.
const device::DeviceCatalog& catalog() {
  static const device::DeviceCatalog c = device::DeviceCatalog::load(data_dir() / "devices.json");
  return c;
}

graph::Network import(const fs::path& model) {
  graph::DimBindings bindings;
  bindings.batch = kBatch;
  graph::Network net = graph::import_onnx(model, bindings);
  net.cast_floating_tensors(device::storage_type(device::Precision::kFp32));
  return net;
}

network::PredictionSettings settings_for(const device::DeviceSpec& device) {
  network::PredictionSettings settings;
  settings.batch = kBatch;
  settings.point.clock_mhz = device.clock.boost_mhz;
  return settings;
}

// What `nnergy predict MODEL --batch 32 --json` does after parsing its flags: the library entry
// point and the JSON reporter; returns the JSON's length so that nothing is optimized away.
std::size_t predict_to_json(const fs::path& model) {
  api::PredictRequest request;
  request.model = model.string();
  request.batch = kBatch;
  request.device = "a100-40gb";
  request.command_line = "nnergy_bench";
  return report::to_json(api::predict(request)).dump().size();
}

fs::path resnet50() { return data_dir() / "zoo" / "resnet50.onnx"; }

void BM_PredictResNet50(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(predict_to_json(resnet50()));
}
BENCHMARK(BM_PredictResNet50)->Unit(benchmark::kMillisecond);

void BM_PredictAllZoo(benchmark::State& state) {
  // Models that do not import are left out (and named in the label) rather than failing the
  // whole benchmark: the zoo is data, and one broken file should not hide the others' timings.
  std::vector<fs::path> models;
  std::string skipped;
  for (const graph::ZooModel& model : graph::list_zoo(data_dir())) {
    try {
      import(model.path);
      models.push_back(model.path);
    } catch (const InvalidInput&) {
      skipped += (skipped.empty() ? "" : ",") + model.name;
    }
  }
  if (models.empty()) {
    state.SkipWithError("no zoo model imports");
    return;
  }
  for (auto _ : state) {
    for (const fs::path& model : models) benchmark::DoNotOptimize(predict_to_json(model));
  }
  state.counters["models"] = static_cast<double>(models.size());
  if (!skipped.empty()) state.SetLabel("skipped (import fails): " + skipped);
}
BENCHMARK(BM_PredictAllZoo)->Unit(benchmark::kMillisecond);

void BM_ImportResNet50(benchmark::State& state) {
  for (auto _ : state) {
    const graph::Network net = import(resnet50());
    benchmark::DoNotOptimize(net.nodes().size());
  }
}
BENCHMARK(BM_ImportResNet50)->Unit(benchmark::kMillisecond);

void BM_PredictOnlyResNet50(benchmark::State& state) {
  const device::DeviceSpec& device = catalog().find("a100-40gb");
  const predict::AnalyticalPredictor analytical(device);
  const network::PredictionSettings settings = settings_for(device);
  const graph::Network net = import(resnet50());
  for (auto _ : state) {
    const network::CostedNetwork costed(net);
    const network::NetworkPrediction prediction =
        network::predict_network(costed, analytical, settings);
    benchmark::DoNotOptimize(prediction.totals.energy_j);
  }
}
BENCHMARK(BM_PredictOnlyResNet50)->Unit(benchmark::kMillisecond);

void BM_ClockSweepResNet50(benchmark::State& state) {
  const device::DeviceSpec& device = catalog().find("a30");
  const predict::AnalyticalPredictor analytical(device);
  const network::PredictionSettings settings = settings_for(device);
  const std::vector<double> clocks = device.supported_clocks_mhz();
  const graph::Network net = import(resnet50());
  const network::CostedNetwork costed(net);
  for (auto _ : state) {
    const network::ClockSweep sweep = network::sweep_clocks(costed, analytical, settings, clocks);
    benchmark::DoNotOptimize(sweep.energy_optimal);
  }
  state.counters["clocks"] = static_cast<double>(clocks.size());
}
BENCHMARK(BM_ClockSweepResNet50)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace nnergy

BENCHMARK_MAIN();
