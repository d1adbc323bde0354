#include "nnergy/api/predict.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "invalid_input_message.h"
#include "nnergy/core/error.h"

namespace nnergy::api {
namespace {

using testing::HasSubstr;
using testing::StartsWith;

PredictRequest resnet50(std::int64_t batch = 8) {
  PredictRequest r;
  r.model = "resnet50";
  r.batch = batch;
  r.command_line = "api_test";
  return r;
}

std::string message_of(const PredictRequest& r) {
  return test_support::invalid_input_message([&] { predict(r); });
}

TEST(ApiPredict, PredictsTheDefaultDeviceWithItsContext) {
  const report::PredictionReport report = predict(resnet50());
  ASSERT_TRUE(report.network && report.device);
  EXPECT_EQ(report.device->id, kDefaultPredictDevice);
  EXPECT_EQ(report.prediction.settings.batch, 8);
  EXPECT_GT(report.prediction.totals.time_s, 0);
  EXPECT_GT(report.prediction.totals.energy_j, 0);
  EXPECT_EQ(report.context.to_json()["batch"], 8);
  EXPECT_EQ(report.context.command_line, "api_test");
}

TEST(ApiPredict, TheSameRequestGivesTheSameFigures) {
  const auto a = predict(resnet50());
  const auto b = predict(resnet50());
  EXPECT_EQ(a.prediction.totals.time_s, b.prediction.totals.time_s);
  EXPECT_EQ(a.prediction.totals.energy_j, b.prediction.totals.energy_j);
}

TEST(ApiPredict, MessagesNameSettingsAsTheFrontEndSpellsThem) {
  PredictRequest r = resnet50(0);
  EXPECT_THAT(message_of(r), StartsWith("batch=0: expected a positive integer"));
  r.names = SettingNames::kFlag;
  EXPECT_THAT(message_of(r), StartsWith("--batch 0: expected a positive integer"));
}

TEST(ApiPredict, APowerLimitAndAClockAreExclusive) {
  PredictRequest r = resnet50();
  r.power_limit_w = 200;
  r.clock_mhz = 900;
  EXPECT_THAT(message_of(r), HasSubstr("power_limit_w and clock_mhz: choose one"));
}

TEST(ApiPredict, ANetworkThatDoesNotFitIsRefusedUnlessIgnored) {
  PredictRequest r = resnet50(1000000);
  EXPECT_THAT(message_of(r), HasSubstr("the largest batch that fits is about"));
  EXPECT_THAT(message_of(r), HasSubstr("(ignore_memory predicts anyway)"));
  r.ignore_memory = true;
  EXPECT_GT(predict(r).prediction.totals.time_s, 0);
}

TEST(ApiPredict, ASweepVisitsTheBoostClockLast) {
  PredictRequest r = resnet50();
  r.sweep_clocks = true;
  const report::PredictionReport report = predict(r);
  ASSERT_TRUE(report.sweep);
  ASSERT_GE(report.sweep->points.size(), 2u);
  EXPECT_EQ(report.sweep->points.back().clock_mhz, report.device->clock.boost_mhz);
  EXPECT_LE(report.sweep->points.size(), 102u);
}

}  // namespace
}  // namespace nnergy::api

namespace nnergy::api {
namespace {

TEST(ApiPredict, AnOptimizerGivenForInferenceIsIgnoredWithAWarning) {
  PredictRequest r;
  r.model = "resnet50";
  r.optimizer = graph::Optimizer::kAdam;
  const report::PredictionReport report = predict(r);
  ASSERT_EQ(report.warnings.size(), 1u);
  EXPECT_EQ(report.warnings[0],
            "optimizer=adam: an optimizer applies to training only; ignored in inference");
  r.mode = graph::Mode::kTraining;
  EXPECT_TRUE(predict(r).warnings.empty());
}

}  // namespace
}  // namespace nnergy::api
