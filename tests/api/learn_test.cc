// api::train, api::evaluate, api::evaluate_published and api::calibrate.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <utility>
#include <vector>

#include "invalid_input_message.h"
#include "nnergy/api/calibrate.h"
#include "nnergy/api/evaluate.h"
#include "nnergy/api/train.h"
#include "nnergy/core/error.h"
#include "temp_dir_test.h"

namespace nnergy::api {
namespace {

using testing::HasSubstr;
using testing::StartsWith;

const std::filesystem::path kDataDir = NNERGY_TEST_DATA_DIR;
const std::filesystem::path kCpuDataset = kDataDir / "datasets" / "cpu.sqlite";
const std::filesystem::path kPublished = kDataDir / "calibration" / "measured_public.json";

class ApiLearn : public test_support::TempDirTest {};

using test_support::invalid_input_message;

std::string read(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

using Calls = std::vector<std::pair<std::size_t, std::size_t>>;

// Progress goes from 0 to the total by steps, the total never changing.
void expect_complete(const Calls& calls, std::size_t total) {
  ASSERT_FALSE(calls.empty());
  EXPECT_EQ(calls.front(), std::make_pair(std::size_t{0}, total));
  EXPECT_EQ(calls.back(), std::make_pair(total, total));
  for (std::size_t i = 1; i < calls.size(); ++i) {
    EXPECT_EQ(calls[i].second, total);
    EXPECT_GE(calls[i].first, calls[i - 1].first);
  }
}

TEST_F(ApiLearn, TrainWritesTheModelAndReportsTheFit) {
  TrainRequest r;
  r.db = kCpuDataset;
  r.predictor = "analytical";
  r.out = dir_ / "cpu.nnp";
  Calls calls;
  r.progress = [&](std::size_t done, std::size_t total) { calls.emplace_back(done, total); };
  const report::TrainReport report = train(r);
  EXPECT_TRUE(std::filesystem::exists(r.out));
  EXPECT_EQ(report.model_file_bytes, std::filesystem::file_size(r.out));
  EXPECT_EQ(report.device.catalog_id, "cpu-core");
  EXPECT_EQ(report.rows, 1424u);
  EXPECT_FALSE(report.power.has_value()) << "the CPU dataset has no power";
  EXPECT_EQ(calls, (Calls{{0, 1}, {1, 1}}));  // the time model only
  EXPECT_THAT(report::render_text(report), HasSubstr("power_w: not trained"));
}

TEST_F(ApiLearn, TrainMessagesNameSettingsAsTheFrontEndSpellsThem) {
  TrainRequest r;
  r.db = kCpuDataset;
  r.out = dir_ / "m.nnp";
  r.predictor = "nope";
  EXPECT_THAT(invalid_input_message([&] { train(r); }),
              StartsWith("predictor=nope: unknown predictor"));
  r.names = SettingNames::kFlag;
  EXPECT_THAT(invalid_input_message([&] { train(r); }),
              StartsWith("--predictor nope: unknown predictor"));
  r.predictor = "forest";
  r.threads = -1;
  EXPECT_THAT(invalid_input_message([&] { train(r); }), StartsWith("--threads -1: expected >= 0"));
  EXPECT_FALSE(std::filesystem::exists(r.out));
}

TEST_F(ApiLearn, EvaluateScoresEveryPredictorAndCountsEveryFit) {
  EvaluateRequest r;
  r.db = kCpuDataset;
  r.predictors = {"analytical", "analytical"};
  r.folds = 3;
  r.holdout_networks = {"resnet18"};
  r.scatter_csv = dir_ / "scatter.csv";
  r.command_line = "api_test";
  Calls calls;
  r.progress = [&](std::size_t done, std::size_t total) { calls.emplace_back(done, total); };
  const report::EvaluationReport report = evaluate(r);
  ASSERT_EQ(report.evaluations.size(), 2u);
  // Per predictor (time only): 3 folds, the test split, the hold-out.
  expect_complete(calls, 2 * 5);
  EXPECT_EQ(report.scatter_csv, r.scatter_csv);
  const std::string scatter = read(r.scatter_csv);
  EXPECT_THAT(scatter, HasSubstr("# command_line: api_test\n"));
  EXPECT_THAT(scatter, HasSubstr("analytical,time_s,holdout,"));
  const std::string text = report::render_text(report);
  EXPECT_THAT(text, HasSubstr("Held-out networks resnet18"));
  EXPECT_THAT(text, HasSubstr("wrote " + r.scatter_csv.string()));
  EXPECT_THAT(text, testing::Not(HasSubstr("seed 00")));
  EXPECT_THAT(text, testing::Not(HasSubstr("Table")));
}

TEST_F(ApiLearn, EvaluateChecksItsSettingsBeforeAnyWork) {
  EvaluateRequest r;
  r.db = kCpuDataset;
  r.predictors = {};
  EXPECT_EQ(invalid_input_message([&] { evaluate(r); }), "predictor: expected at least one name");
  r.predictors = {"analytical", "no-such-model"};
  EXPECT_THAT(invalid_input_message([&] { evaluate(r); }),
              StartsWith("predictor=no-such-model: unknown"));
  r.scatter_csv = dir_ / "missing" / "s.csv";
  EXPECT_THAT(invalid_input_message([&] { evaluate(r); }), StartsWith("scatter_csv "));
}

TEST_F(ApiLearn, EvaluatePublishedPredictsTheCorpusAndWritesOneCsvDialect) {
  PublishedEvaluationRequest r;
  r.published = kPublished;
  r.grades = {"A"};
  r.host_launch_us = 0;
  r.scatter_csv = dir_ / "published.csv";
  Calls calls;
  r.progress = [&](std::size_t done, std::size_t total) { calls.emplace_back(done, total); };
  const report::PublishedEvaluationReport report = evaluate_published(r);
  expect_complete(calls, report.measurements);
  EXPECT_EQ(report.records_read, 918u);
  EXPECT_EQ(report.evaluation.evaluated.size() + report.evaluation.failures.size(),
            report.measurements);
  EXPECT_EQ(report.host_launch_s, 0);
  const std::string csv = read(r.scatter_csv);
  EXPECT_THAT(csv, HasSubstr("id,network,device,precision,mode,part,batch,measured_s,"));
  // csv::field quotes only what needs quoting.
  EXPECT_THAT(csv, HasSubstr(",\"alexnet (BVLC Caffe AlexNet, grouped conv)\",gtx-1080-ti,"));
  EXPECT_THAT(csv, HasSubstr(",vgg16 (model D),gtx-1080-ti,"));
  const nlohmann::ordered_json j = report::to_json(report);
  EXPECT_EQ(j["evaluated"], report.evaluation.evaluated.size());
  EXPECT_EQ(j["context"]["predictor"], "analytical");
}

TEST(ApiEvaluatePublished, BadSettingsAreNamed) {
  PublishedEvaluationRequest r;
  r.published = kPublished;
  r.host_launch_us = -1;
  EXPECT_EQ(invalid_input_message([&] { evaluate_published(r); }),
            "host_launch_us=-1: expected >= 0");
  r.host_launch_us.reset();
  r.grades = {"A", "D"};
  r.names = SettingNames::kFlag;
  EXPECT_EQ(invalid_input_message([&] { evaluate_published(r); }),
            "--grades D: expected A, B or C");
}

TEST_F(ApiLearn, CalibrateRefusesUnknownGradesAndWritesNothing) {
  CalibrateRequest r;
  r.grades = {"Z"};
  r.output = dir_ / "calibrated.json";
  EXPECT_EQ(invalid_input_message([&] { calibrate(r); }), "grades=Z: expected A, B or C");
  EXPECT_FALSE(std::filesystem::exists(r.output));
}

}  // namespace
}  // namespace nnergy::api
