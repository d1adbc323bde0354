// Wall time of the learned predictors on the committed CPU dataset: training the forest (what
// `nnergy train --predictor forest` spends after reading the dataset) and predicting ResNet-50
// with a trained forest model file (load model + ONNX import + predict, what `nnergy predict
// resnet50 --predictor cpu-forest.nnp` spends). See bench/README.md for the targets.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "nnergy/device/device_catalog.h"
#include "nnergy/graph/onnx_importer.h"
#include "nnergy/graph/zoo.h"
#include "nnergy/learn/learned_predictor.h"
#include "nnergy/learn/model_file.h"
#include "nnergy/learn/training_table.h"
#include "nnergy/network/network_prediction.h"
#include "nnergy/predict/analytical_predictor.h"
#include "nnergy/regress/regressor.h"

namespace nnergy {
namespace {

namespace fs = std::filesystem;

const fs::path& data_dir() {
  static const fs::path dir = NNERGY_BENCH_DATA_DIR;
  return dir;
}

// The built-in catalog only: a user catalog must not change what is measured.
const device::DeviceCatalog& catalog() {
  static const device::DeviceCatalog c = device::DeviceCatalog::load(data_dir() / "devices.json");
  return c;
}

regress::RegressorRegistry registry() {
  regress::RegressorRegistry r;
  regress::register_standard_regressors(r);
  return r;
}

const learn::TrainingTable& cpu_table() {
  static const learn::TrainingTable table = learn::build_training_table(
      (data_dir() / "datasets" / "cpu.sqlite").string(), catalog(), std::nullopt);
  return table;
}

learn::ModelFile train_forest() {
  learn::TrainSettings settings;
  settings.predictor = "forest";
  settings.command_line = "learn_bench";
  return learn::ModelFile::train(cpu_table(), registry(), settings);
}

// A forest model file trained once per process, in the temporary directory.
const std::string& forest_model_path() {
  static const std::string path = [] {
    const fs::path file = fs::temp_directory_path() / "nnergy-learn-bench-forest.nnp";
    train_forest().save(file.string());
    return file.string();
  }();
  return path;
}

void BM_TrainForestCpuDataset(benchmark::State& state) {
  cpu_table();  // reading the dataset is not part of the fit
  for (auto _ : state) {
    learn::ModelFile model = train_forest();
    benchmark::DoNotOptimize(&model);
  }
}
BENCHMARK(BM_TrainForestCpuDataset)->Unit(benchmark::kMillisecond)->Iterations(1);

void BM_LoadForestModel(benchmark::State& state) {
  const std::string path = forest_model_path();
  for (auto _ : state) {
    learn::ModelFile model = learn::ModelFile::load(path, registry());
    benchmark::DoNotOptimize(&model);
  }
}
BENCHMARK(BM_LoadForestModel)->Unit(benchmark::kMillisecond);

// Load model + import ONNX + predict every layer of ResNet-50 (batch 1, inference, the model's
// device at its boost clock); returns the total time so the prediction cannot be optimized away.
double load_and_predict_resnet50(const std::string& path) {
  auto model = std::make_shared<const learn::ModelFile>(learn::ModelFile::load(path, registry()));
  const device::DeviceSpec& device = catalog().find(model->device().catalog_id);
  graph::DimBindings bindings;
  bindings.batch = 1;
  graph::Network net = graph::import_onnx(graph::resolve_model("resnet50", data_dir()), bindings);
  net.cast_floating_tensors(device::storage_type(device::Precision::kFp32));
  network::PredictionSettings settings;
  settings.batch = 1;
  settings.point.clock_mhz = device.clock.boost_mhz;
  const network::CostedNetwork costed(net);
  const learn::LearnedPredictor learned(model, device, path);
  return network::predict_network(costed, learned, settings).totals.time_s;
}

void BM_LoadAndPredictResNet50Forest(benchmark::State& state) {
  const std::string path = forest_model_path();
  for (auto _ : state) benchmark::DoNotOptimize(load_and_predict_resnet50(path));
}
BENCHMARK(BM_LoadAndPredictResNet50Forest)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace nnergy

BENCHMARK_MAIN();
