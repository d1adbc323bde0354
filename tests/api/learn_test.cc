// api::train, api::evaluate, api::evaluate_published and api::calibrate.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
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
  expect_complete(calls,
                  report.measurements + report.power_measurements + report.energy_measurements);
  EXPECT_EQ(report.records_read, 918u);
  // The calibration corpus itself: every figure is in-sample.
  EXPECT_TRUE(report.in_sample());
  EXPECT_THAT(report::render_text(report),
              HasSubstr("of data/calibration/measured_public.json + "
                        "data/measured/h100/networks.json: on that corpus these figures are "
                        "in-sample"));
  EXPECT_EQ(report.evaluation.evaluated.size() + report.evaluation.failures.size(),
            report.measurements);
  EXPECT_EQ(report.host.host_launch_s, 0);
  EXPECT_EQ(report.host.training_host_launch_s, 0);  // --host-launch-us 0: none in training
  const std::string csv = read(r.scatter_csv);
  EXPECT_THAT(csv, HasSubstr("id,network,device,precision,mode,part,batch,measured_s,"));
  // csv::field quotes only what needs quoting.
  EXPECT_THAT(csv, HasSubstr(",\"alexnet (BVLC Caffe AlexNet, grouped conv)\",gtx-1080-ti,"));
  EXPECT_THAT(csv, HasSubstr(",vgg16 (model D),gtx-1080-ti,"));
  const nlohmann::ordered_json j = report::to_json(report);
  EXPECT_EQ(j["evaluated"], report.evaluation.evaluated.size());
  EXPECT_EQ(j["context"]["predictor"], "analytical");
}

// A hand-written file of one GH200 run (resnet18, batch 8, fp32 inference): its time, average
// power and energy per iteration, a quantity nnergy does not predict and a power that is not
// positive.
const char* const kGh200Records = R"json([
  {"id": "t", "source": "hand", "location": "", "framework": "", "derivation": "", "notes": "", "gpu": "NVIDIA GH200 (Grace Hopper, GPU part)", "network": "resnet18",
   "mode": "inference", "batch": 8, "precision": "fp32 (strict)", "quantity": "time_per_iteration",
   "value": 2, "unit": "ms", "value_si": 0.002, "unit_si": "s", "measured": true, "grade": "A"},
  {"id": "p", "source": "hand", "location": "", "framework": "", "derivation": "", "notes": "", "gpu": "NVIDIA GH200 (Grace Hopper, GPU part)", "network": "resnet18",
   "mode": "inference", "batch": 8, "precision": "fp32 (strict)", "quantity": "avg_power",
   "value": 400, "unit": "W", "value_si": 400, "unit_si": "W", "measured": true, "grade": "A"},
  {"id": "e", "source": "hand", "location": "", "framework": "", "derivation": "", "notes": "", "gpu": "NVIDIA GH200 (Grace Hopper, GPU part)", "network": "resnet18",
   "mode": "inference", "batch": 8, "precision": "fp32 (strict)",
   "quantity": "energy_per_iteration", "value": 0.8, "unit": "J", "value_si": 0.8, "unit_si": "J",
   "measured": true, "grade": "A"},
  {"id": "u", "source": "hand", "location": "", "framework": "", "derivation": "", "notes": "", "gpu": "NVIDIA GH200 (Grace Hopper, GPU part)", "network": "resnet18",
   "mode": "inference", "batch": 8, "precision": "fp32 (strict)",
   "quantity": "max_observed_power", "value": 500, "unit": "W", "value_si": 500, "unit_si": "W",
   "measured": true, "grade": "A"},
  {"id": "bad", "source": "hand", "location": "", "framework": "", "derivation": "", "notes": "", "gpu": "NVIDIA GH200 (Grace Hopper, GPU part)", "network": "resnet18",
   "mode": "inference", "batch": 8, "precision": "fp32 (strict)", "quantity": "avg_power",
   "value": -400, "unit": "W", "value_si": -400, "unit_si": "W", "measured": true, "grade": "A"}
])json";

TEST_F(ApiLearn, EvaluatePublishedScoresPowerAndEnergyOfAFileOutsideTheCorpus) {
  const std::filesystem::path file = dir_ / "gh200.json";
  std::ofstream(file) << kGh200Records;
  PublishedEvaluationRequest r;
  r.published = file;
  r.scatter_csv = dir_ / "gh200.csv";
  const report::PublishedEvaluationReport report = evaluate_published(r);
  ASSERT_EQ(report.evaluation.evaluated.size(), 1u);
  ASSERT_EQ(report.power.powers.size(), 1u);
  ASSERT_EQ(report.power.energies.size(), 1u);
  EXPECT_TRUE(report.power.failures.empty());
  EXPECT_EQ(report.skipped,
            (std::vector<std::pair<std::string, std::string>>{
                {"u",
                 "quantity 'max_observed_power' is not a whole-network time, average power or "
                 "energy per iteration"},
                {"bad", "no positive SI value"}}));
  // Known answer: one record per quantity, so the MAPE is |predicted/measured − 1| and the
  // median ratio predicted/measured (to rounding: 1e-12).
  const double power_ratio = report.power.powers[0].predicted_w / 400;
  const double energy_ratio = report.power.energies[0].predicted_j / 0.8;
  EXPECT_GT(power_ratio, 0);
  const nlohmann::ordered_json j = report::to_json(report);
  for (const auto& [quantity, ratio] :
       {std::pair{"power", power_ratio}, {"energy", energy_ratio}}) {
    const auto& all = j[quantity]["by_device"].back();
    EXPECT_EQ(all["group"], "all");
    EXPECT_EQ(all["count"], 1);
    EXPECT_NEAR(all["mape"].get<double>(), std::abs(ratio - 1), 1e-12) << quantity;
    EXPECT_NEAR(all["median_ratio"].get<double>(), ratio, 1e-12) << quantity;
    EXPECT_EQ(j[quantity]["by_device"][0]["group"], "gh200");
  }
  // Energy = the predicted time × the predicted average power of the same run.
  const calibration::EvaluatedEnergy& energy = report.power.energies[0];
  EXPECT_NEAR(energy.predicted_j, energy.predicted_time_s * energy.predicted_w,
              1e-9 * energy.predicted_j);
  EXPECT_NEAR(energy.predicted_w, report.power.powers[0].predicted_w, 1e-12 * energy.predicted_w);
  EXPECT_EQ(j["calibration"]["in_sample"], false);
  EXPECT_EQ(j["calibration"]["records_in_corpus"], 0);

  EXPECT_EQ(report.rejected, 0u);
  // Not the corpus: out-of-sample, and the GH200 (no measurement of its own) on Hopper's.
  EXPECT_FALSE(report.in_sample());
  ASSERT_EQ(report.transferred_devices.size(), 1u);
  EXPECT_EQ(report.transferred_devices[0].id, "gh200");
  const std::string text = report::render_text(report);
  EXPECT_THAT(text, HasSubstr("none of this file's measurements were used in calibration"));
  EXPECT_THAT(text, HasSubstr("gh200 has no measurement in the corpus: its time model was "
                              "calibrated on 648 measured whole-network times of Hopper GPUs"));
  EXPECT_THAT(text, testing::Not(HasSubstr("in-sample")));
  EXPECT_THAT(text, HasSubstr("Average power over the iteration"));
  EXPECT_THAT(text, HasSubstr("Energy per iteration"));

  // One CSV: each row fills its quantity's pair of columns.
  const std::string csv = read(r.scatter_csv);
  EXPECT_THAT(csv, HasSubstr("id,network,device,precision,mode,part,batch,measured_s,predicted_s,"
                             "measured_w,predicted_w,measured_j,predicted_j\n"));
  EXPECT_THAT(csv, HasSubstr("\nt,resnet18,gh200,fp32,inference,iteration,8,0.002,"));
  EXPECT_THAT(csv, HasSubstr("\np,resnet18,gh200,fp32,inference,iteration,8,,,400,"));
  EXPECT_THAT(csv, HasSubstr("\ne,resnet18,gh200,fp32,inference,iteration,8,,,,,0.8,"));
}

TEST_F(ApiLearn, EvaluatePublishedSaysWhichRecordsAreInTheCalibrationCorpus) {
  // The corpus's first three records alone: a part of the corpus is in-sample.
  std::ifstream in(kPublished);
  const nlohmann::json corpus = nlohmann::json::parse(in);
  nlohmann::json part = nlohmann::json::array();
  for (std::size_t i = 0; i < 3; ++i) part.push_back(corpus[i]);
  const std::filesystem::path subset = dir_ / "subset.json";
  std::ofstream(subset) << part.dump();
  PublishedEvaluationRequest r;
  r.published = subset;
  const report::PublishedEvaluationReport in_corpus = evaluate_published(r);
  EXPECT_TRUE(in_corpus.in_sample());
  EXPECT_THAT(report::render_text(in_corpus), HasSubstr("these figures are in-sample"));
  // The same with a record changed and one added: neither is in the corpus.
  part[0]["value"] = part[0]["value"].get<double>() * 2;
  part.push_back(nlohmann::json::parse(kGh200Records)[0]);
  // A record the reader rejects is listed with its reason, and counts for neither side.
  nlohmann::json incomplete = nlohmann::json::parse(kGh200Records)[1];
  incomplete["id"] = "incomplete";
  incomplete.erase("notes");
  part.push_back(incomplete);
  std::ofstream(subset) << part.dump();
  const report::PublishedEvaluationReport mixed = evaluate_published(r);
  EXPECT_FALSE(mixed.in_sample());
  ASSERT_EQ(mixed.rejected_records.size(), 1u);
  EXPECT_EQ(mixed.rejected_records[0].first, "incomplete");
  EXPECT_THAT(mixed.rejected_records[0].second, HasSubstr("'notes' is missing"));
  EXPECT_THAT(report::render_text(mixed),
              HasSubstr("Records the reader rejected:\n  incomplete: "));
  EXPECT_EQ(mixed.records_in_corpus, 2u);
  EXPECT_THAT(report::render_text(mixed),
              HasSubstr("2 of this file's 4 records are in that corpus (in-sample), the others "
                        "were not used in calibration"));
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
