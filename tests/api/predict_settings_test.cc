#include "nnergy/api/predict_settings.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "nnergy/core/error.h"

namespace nnergy::api {
namespace {

using ::testing::HasSubstr;

// Every setting stores into the request what it says, by keyword, from each kind of value.
TEST(PredictSettings, EachKindOfValueLandsInItsField) {
  PredictRequest r;
  apply_predict_setting(r, "device", std::string("h100"));
  apply_predict_setting(r, "batch", std::int64_t{32});
  apply_predict_setting(r, "clock_mhz", 1200.0);
  apply_predict_setting(r, "strict_fp32", true);
  apply_predict_setting(r, "mode", std::string("training"));
  apply_predict_setting(r, "runtime", std::string("cuda-graphs"));
  apply_predict_setting(r, "dims", std::map<std::string, std::int64_t>{{"seq", 128}});
  apply_predict_setting(r, "predictor_file", std::string("analytical"));
  EXPECT_EQ(r.device, "h100");
  EXPECT_EQ(r.batch, 32);
  EXPECT_EQ(r.clock_mhz, 1200.0);
  EXPECT_TRUE(r.strict_fp32);
  EXPECT_EQ(r.mode, graph::Mode::kTraining);
  EXPECT_EQ(r.runtime, network::Runtime::kCudaGraphs);
  EXPECT_EQ(r.dims.at("seq"), 128);
  EXPECT_TRUE(r.predictor_file.empty()) << "'analytical' is the analytical model, not a file";
}

// Keywords are unique snake_case and flags their own; no two settings share a flag.
TEST(PredictSettings, KeywordsAndFlagsAreUnique) {
  std::set<std::string> flags;
  for (const auto& entry : predict_settings().entries()) {
    EXPECT_EQ(entry.name.find('-'), std::string::npos) << entry.name;
    EXPECT_EQ(entry.value.flag.rfind("--", 0), 0u) << entry.value.flag;
    EXPECT_TRUE(flags.insert(entry.value.flag).second) << entry.value.flag;
    EXPECT_FALSE(entry.summary.empty()) << entry.name << " has no help";
    EXPECT_NE(entry.value.apply, nullptr) << entry.name;
  }
  EXPECT_GE(flags.size(), 20u);
}

TEST(PredictSettings, BadValuesNameTheSettingAsTheFrontEndSpellsIt) {
  PredictRequest python;
  python.names = SettingNames::kKeyword;
  try {
    apply_predict_setting(python, "batch", std::string("8"));
    FAIL() << "a text for an integer was taken";
  } catch (const InvalidInput& e) {
    EXPECT_STREQ(e.what(), "batch: expected an integer, found a text");
  }
  try {
    apply_predict_setting(python, "bach", std::int64_t{8});
    FAIL() << "an unknown keyword was taken";
  } catch (const InvalidInput& e) {
    EXPECT_THAT(e.what(), HasSubstr("unknown keyword of predict 'bach'; accepted: device"));
    EXPECT_THAT(e.what(), HasSubstr("did you mean 'batch'"));
  }
  PredictRequest cli;
  cli.names = SettingNames::kFlag;
  try {
    apply_predict_setting(cli, "mode",
                          parse_setting_text(SettingType::kText, "sideways", cli.names, "mode"));
    FAIL() << "an unknown mode was taken";
  } catch (const InvalidInput& e) {
    EXPECT_THAT(e.what(), HasSubstr("--mode"));
  }
}

TEST(PredictSettings, CommandLineTextsAreReadByType) {
  EXPECT_EQ(std::get<std::int64_t>(
                parse_setting_text(SettingType::kInteger, "64", SettingNames::kFlag, "batch")),
            64);
  EXPECT_EQ(std::get<double>(parse_setting_text(SettingType::kNumber, "1.5e3", SettingNames::kFlag,
                                                "clock_mhz")),
            1500.0);
  for (const char* bad : {"", "8x", "eight", "1.5"}) {
    try {
      parse_setting_text(SettingType::kInteger, bad, SettingNames::kFlag, "batch");
      FAIL() << "'" << bad << "' was read as an integer";
    } catch (const InvalidInput& e) {
      EXPECT_THAT(e.what(), HasSubstr("--batch " + std::string(bad) + ": expected an integer"));
    }
  }
  EXPECT_THROW(parse_setting_text(SettingType::kNumber, "inf", SettingNames::kFlag, "clock_mhz"),
               InvalidInput);
}

}  // namespace
}  // namespace nnergy::api
