// End-to-end tests of `nnergy predict`'s device memory estimate and of the warning about
// eval-mode exports (folded BatchNorm) predicted for training.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "nnergy_runner.h"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using nnergy::cli_test::run_cached;
using nnergy::cli_test::run_json;
using nnergy::cli_test::run_nnergy;
using nnergy::cli_test::RunResult;
using testing::HasSubstr;
using testing::Not;
using testing::StartsWith;

const fs::path kFixtureDir = NNERGY_TEST_FIXTURE_DIR;

const std::vector<std::string> kResnet50 = {"predict",   "resnet50", "--device",
                                            "a100-40gb", "--batch",  "32"};

std::vector<std::string> with(std::vector<std::string> args, const std::vector<std::string>& more) {
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

std::string notes_text(const json& j) {
  std::string all;
  for (const json& note : j.value("notes", json::array())) all += note.get<std::string>() + "\n";
  return all;
}

TEST(PredictMemory, TotalsShowTheDeviceMemoryRowAndHowItWasEstimated) {
  const RunResult& r = run_cached(kResnet50);
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_THAT(r.out, testing::ContainsRegex("device memory +[0-9.]+ [KMGT]iB +peak of 40\\.0 GiB "
                                            "\\([0-9]+ %\\), estimated: weights"));
  EXPECT_THAT(r.out, HasSubstr("largest batch that fits"));
  EXPECT_THAT(r.out, HasSubstr("device memory is estimated, not measured"));
  EXPECT_THAT(r.out, HasSubstr("excludes the CUDA context"));
}

TEST(PredictMemory, JsonHasThePeakAndItsParts) {
  const json j = run_json(with(kResnet50, {"--json"}));
  ASSERT_TRUE(j.contains("memory") && j["memory"].is_object()) << j.dump(2).substr(0, 2000);
  const json& m = j["memory"];
  const double peak = m.value("peak_bytes", 0.0);
  EXPECT_DOUBLE_EQ(j["totals"].value("memory_peak_bytes", 0.0), peak);
  // The parts sum to the peak (inference: no gradients, no optimizer state).
  constexpr double kSumRelative = 1e-12;
  EXPECT_NEAR(m.value("weights_bytes", 0.0) + m.value("activations_bytes", 0.0), peak,
              kSumRelative * peak);
  EXPECT_EQ(m.value("gradients_bytes", -1.0), 0.0);
  EXPECT_EQ(m.value("optimizer_state_bytes", -1.0), 0.0);
  EXPECT_DOUBLE_EQ(m.value("device_memory_bytes", 0.0), 40.0 * 1024 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(m.value("per_sample_bytes", 0.0), m.value("activations_bytes", 0.0) / 32);
  EXPECT_GT(m.value("largest_fitting_batch", 0), 32);
  EXPECT_FALSE(m.value("exceeds_device", true));
  // ResNet-50's fp32 weights: ~25.6 M parameters + BatchNorm buffers, 4 B each.
  EXPECT_NEAR(m.value("weights_bytes", 0.0), 102.4e6, 0.5e6);
}

TEST(PredictMemory, CsvCarriesTheEstimateInItsContextLines) {
  const RunResult& r = run_cached(with(kResnet50, {"--csv"}));
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_THAT(r.out, testing::ContainsRegex("\n# memory_peak_bytes: [0-9]+\n# memory: \\{"));
}

TEST(PredictMemory, TrainingCountsGradientsAndOptimizerState) {
  const json j = run_json(with(kResnet50, {"--mode", "training", "--optimizer", "adam", "--json"}));
  const json& m = j["memory"];
  const double weights = m.value("weights_bytes", 0.0);
  EXPECT_GT(m.value("gradients_bytes", 0.0), 0.99 * weights);
  EXPECT_DOUBLE_EQ(m.value("optimizer_state_bytes", 0.0), 2 * m.value("gradients_bytes", 0.0));
  EXPECT_GT(m.value("saved_activations_bytes", 0.0), 0.0);
}

TEST(PredictMemory, BatchBeyondTheDeviceExitsTwoNamingNeedCapacityAndLargestBatch) {
  for (const char* extra : {"", "--sweep-clocks", "--clock-mhz"}) {
    std::vector<std::string> args = {"predict", "resnet50", "--batch", "1000000"};
    if (std::string(extra) == "--sweep-clocks") args.push_back(extra);
    if (std::string(extra) == "--clock-mhz") args = with(args, {"--clock-mhz", "1005"});
    const RunResult r = run_nnergy(args);
    EXPECT_EQ(r.exit_code, 2) << r;
    EXPECT_EQ(r.out, "") << r;
    EXPECT_THAT(r.err, StartsWith("nnergy: error: --batch 1000000 ")) << r;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r;
    EXPECT_THAT(r.err, testing::ContainsRegex("resnet50 needs an estimated [0-9.]+ TiB of device "
                                              "memory in inference, the a100-40gb has 40\\.0 GiB "
                                              "\\(exceeds by [0-9.]+ TiB\\); the largest batch "
                                              "that fits is about [0-9]+"))
        << r;
  }
}

TEST(PredictMemory, IgnoreMemoryPredictsAnywayWithAWarning) {
  const json j =
      run_json({"predict", "resnet50", "--batch", "1000000", "--ignore-memory", "--json"});
  EXPECT_TRUE(j["memory"].value("exceeds_device", false));
  EXPECT_THAT(notes_text(j), HasSubstr("WARNING: the estimated peak"));
}

TEST(PredictMemory, UnknownDeviceMemoryIsNotCheckedAndSaysSo) {
  const json j =
      run_json({"predict", "resnet18", "--device", "cpu-core", "--batch", "100000", "--json"});
  EXPECT_TRUE(j["memory"]["device_memory_bytes"].is_null());
  EXPECT_THAT(notes_text(j), HasSubstr("no memory size for cpu-core"));
}

// --- folded BatchNorm -----------------------------------------------------------------------

const std::string kFoldedWarning = "If the model has BatchNorm layers";

TEST(PredictFoldedBatchNorm, EvalExportWarnsInTrainingOnly) {
  const std::string model = (kFixtureDir / "cli" / "folded_bn_convnet.onnx").string();
  const RunResult& training = run_cached({"predict", model, "--mode", "training", "--batch", "4"});
  ASSERT_EQ(training.exit_code, 0) << training;
  EXPECT_THAT(training.out, HasSubstr(kFoldedWarning));
  EXPECT_THAT(training.out, HasSubstr("training=torch.onnx.TrainingMode.TRAINING"));
  const json j = run_json({"predict", model, "--mode", "training", "--batch", "4", "--json"});
  EXPECT_THAT(notes_text(j), HasSubstr(kFoldedWarning));

  const RunResult& inference = run_cached({"predict", model, "--batch", "4"});
  ASSERT_EQ(inference.exit_code, 0) << inference;
  EXPECT_THAT(inference.out, Not(HasSubstr(kFoldedWarning)));
}

TEST(PredictFoldedBatchNorm, ZooModelsDoNotWarn) {
  for (const char* model : {"resnet50", "vgg16"}) {
    const RunResult& r = run_cached({"predict", model, "--mode", "training", "--batch", "2"});
    ASSERT_EQ(r.exit_code, 0) << r;
    EXPECT_THAT(r.out, Not(HasSubstr(kFoldedWarning))) << model;
  }
}

}  // namespace
