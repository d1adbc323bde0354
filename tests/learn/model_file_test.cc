#include "nnergy/learn/model_file.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "json_depth_bomb.h"
#include "learn_fixture.h"
#include "nnergy/core/error.h"

namespace nnergy::learn {
namespace {

using ::testing::HasSubstr;
using testing::LearnTest;

class ModelFileTest : public LearnTest {
 protected:
  void SetUp() override {
    LearnTest::SetUp();
    testing::copy_two_chains_dataset(file("d.sqlite"));
    table_ = build_training_table(file("d.sqlite"), testing::test_catalog(), {});
    settings_.predictor = "forest";
    settings_.seed = 5;
    settings_.extra = testing::small_forest();
    settings_.command_line = "nnergy train (test)";
  }

  std::string read(const std::string& path) const {
    std::ifstream in(path);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
  }

  // Saves `model`, changes its JSON with `edit`, and returns the InvalidInput message of loading
  // the result ("" when it loads).
  std::string load_error(const ModelFile& model, const std::function<void(nlohmann::json&)>& edit) {
    nlohmann::json j = model.to_json();
    edit(j);
    std::ofstream(file("edited.nnp")) << j.dump();
    try {
      ModelFile::load(file("edited.nnp"), registry_);
    } catch (const InvalidInput& e) {
      return e.what();
    }
    return "";
  }

  TrainingTable table_;
  TrainSettings settings_;
  regress::RegressorRegistry registry_ = testing::standard_registry();
};

TEST_F(ModelFileTest, RoundTripGivesTheSamePredictions) {
  const ModelFile model = ModelFile::train(table_, registry_, settings_);
  model.save(file("m.nnp"));
  const ModelFile loaded = ModelFile::load(file("m.nnp"), registry_);
  const auto before = model.time().regressor->predict(table_.features);
  const auto after = loaded.time().regressor->predict(table_.features);
  ASSERT_EQ(before.size(), after.size());
  for (std::size_t i = 0; i < before.size(); ++i) {
    EXPECT_NEAR(after[i].value, before[i].value, 1e-9 * before[i].value);
    EXPECT_NEAR(after[i].stddev, before[i].stddev, 1e-9 * before[i].value);
  }
  EXPECT_EQ(loaded.encoder().names(), table_.encoder.names());
  EXPECT_EQ(loaded.predictor(), "forest");
  EXPECT_EQ(loaded.device().catalog_id, kCpuCoreDeviceId);
  EXPECT_EQ(loaded.power(), nullptr) << "the dataset has no power";
  EXPECT_EQ(loaded.trained_modes(), (std::vector<std::string>{"inference", "training"}));
  EXPECT_EQ(loaded.trained_dtypes(), std::vector<std::string>{"fp32"});
  EXPECT_EQ(loaded.trained_clocks_mhz(), std::vector<std::int64_t>{0});
}

TEST_F(ModelFileTest, FileIsSelfDescribing) {
  const ModelFile model = ModelFile::train(table_, registry_, settings_);
  model.save(file("m.nnp"));
  const nlohmann::json j = nlohmann::json::parse(read(file("m.nnp")));
  EXPECT_EQ(j["format"], kModelFileFormat);
  EXPECT_EQ(j["format_version"], kModelFileFormatVersion);
  EXPECT_EQ(j["context"]["command_line"], "nnergy train (test)");
  EXPECT_TRUE(j["context"].contains("tool_version"));
  EXPECT_TRUE(j["context"].contains("created_utc"));
  EXPECT_EQ(j["dataset"]["digest_algorithm"], "fnv1a-64");
  EXPECT_EQ(j["dataset"]["digest"], table_.dataset_digest);
  EXPECT_EQ(j["dataset"]["rows_used"], 110);
  EXPECT_EQ(j["dataset"]["rows_dropped"], 0);
  EXPECT_EQ(j["device"]["catalog_id"], kCpuCoreDeviceId);
  EXPECT_EQ(j["device"]["dataset_name"], "Synthetic CPU");
  EXPECT_EQ(j["training"]["seed"], 5);
  EXPECT_EQ(j["training"]["settings"], testing::small_forest());
  ASSERT_TRUE(j["targets"].contains("time_s"));
  EXPECT_FALSE(j["targets"].contains("power_w"));
  EXPECT_EQ(j["targets"]["time_s"]["regressor"], "forest");
  EXPECT_TRUE(j["targets"]["time_s"]["metrics"]["training_set"].contains("inference"));
  // No temporary file is left beside it.
  for (const auto& entry : std::filesystem::directory_iterator(dir_)) {
    EXPECT_THAT(entry.path().filename().string(), ::testing::Not(HasSubstr(".tmp")));
  }
}

TEST_F(ModelFileTest, PowerModelWhenTheDatasetHasPower) {
  testing::SyntheticDataset spec;
  spec.networks = testing::two_chains();
  spec.power_w = [](const graph::OpDescriptor& op, const std::string&) {
    return std::optional<double>(20.0 + 1e-6 * op.inference.flop_count);  // synthetic power
  };
  testing::write_dataset(file("p.sqlite"), spec);
  const TrainingTable table = build_training_table(file("p.sqlite"), testing::test_catalog(), {});
  const ModelFile model = ModelFile::train(table, registry_, settings_);
  ASSERT_NE(model.power(), nullptr);
  model.save(file("p.nnp"));
  const ModelFile loaded = ModelFile::load(file("p.nnp"), registry_);
  ASSERT_NE(loaded.power(), nullptr);
  const auto before = model.power()->regressor->predict(table.features);
  const auto after = loaded.power()->regressor->predict(table.features);
  for (std::size_t i = 0; i < before.size(); ++i) {
    EXPECT_NEAR(after[i].value, before[i].value, 1e-9 * before[i].value);
  }
}

// Each target's model is fitted with its own "target" setting: the analytical (and hybrid)
// regressor then reads the analytical power column for the power model, not the time column
// (which gave every op a power of about 0 W).
TEST_F(ModelFileTest, PowerModelOfTheAnalyticalRegressorReadsTheAnalyticalPower) {
  testing::SyntheticDataset spec;
  spec.networks = testing::two_chains();
  spec.power_w = [](const graph::OpDescriptor&, const std::string&) {
    return std::optional<double>(50.0);
  };
  testing::write_dataset(file("p.sqlite"), spec);
  const TrainingTable table = build_training_table(file("p.sqlite"), testing::test_catalog(), {});
  TrainSettings settings = settings_;
  settings.predictor = "analytical";
  settings.extra = nlohmann::json::object();
  const ModelFile model = ModelFile::train(table, registry_, settings);
  ASSERT_NE(model.power(), nullptr);
  const auto power = model.power()->regressor->predict(table.features);
  const auto time = model.time().regressor->predict(table.features);
  const std::size_t power_column = table.features.column("analytical_power_w");
  const std::size_t time_column = table.features.column("analytical_time_s");
  for (std::size_t i = 0; i < power.size(); ++i) {
    EXPECT_DOUBLE_EQ(power[i].value, table.features.row(i)[power_column]);
    EXPECT_DOUBLE_EQ(time[i].value, table.features.row(i)[time_column]);
  }
}

TEST_F(ModelFileTest, SchemaMismatchIsAClearError) {
  const ModelFile model = ModelFile::train(table_, registry_, settings_);
  const std::string message = load_error(model, [](nlohmann::json& j) {
    j["targets"]["time_s"]["feature_names"][0] = "renamed_feature";
  });
  EXPECT_THAT(message, HasSubstr("edited.nnp"));
  EXPECT_THAT(message, HasSubstr("feature schema"));
  EXPECT_THAT(message, HasSubstr("'renamed_feature'"));
  const std::string shorter = load_error(model, [](nlohmann::json& j) {
    j["targets"]["time_s"]["feature_names"].erase(j["targets"]["time_s"]["feature_names"].size() -
                                                  1);
  });
  EXPECT_THAT(shorter, HasSubstr("feature schema"));
}

TEST_F(ModelFileTest, OtherFormatsAndCorruptFilesAreClearErrors) {
  const ModelFile model = ModelFile::train(table_, registry_, settings_);
  EXPECT_THAT(load_error(model, [](nlohmann::json& j) { j["format_version"] = 2; }),
              HasSubstr("format_version 2"));
  EXPECT_THAT(load_error(model, [](nlohmann::json& j) { j["format"] = "something-else"; }),
              HasSubstr("not an nnergy model file"));
  EXPECT_THAT(
      load_error(model, [](nlohmann::json& j) { j["targets"]["time_s"]["regressor"] = "nope"; }),
      HasSubstr("'nope' is not a regressor"));
  EXPECT_THAT(load_error(model, [](nlohmann::json& j) { j.erase("features"); }),
              HasSubstr("missing field 'features'"));

  model.save(file("m.nnp"));
  const std::string text = read(file("m.nnp"));
  std::ofstream(file("truncated.nnp")) << text.substr(0, text.size() / 2);
  try {
    ModelFile::load(file("truncated.nnp"), registry_);
    FAIL() << "expected InvalidInput";
  } catch (const InvalidInput& e) {
    EXPECT_THAT(e.what(), HasSubstr("truncated.nnp"));
    EXPECT_THAT(e.what(), HasSubstr("not valid JSON"));
  }
  EXPECT_THROW(ModelFile::load(file("missing.nnp"), registry_), InvalidInput);
}

// Found by fuzz/model_file: a number beyond double's range made nlohmann::json throw out_of_range,
// which escaped ModelFile::parse (an internal error, exit 1, instead of InvalidInput).
TEST_F(ModelFileTest, NumberBeyondDoubleIsInvalidInput) {
  try {
    ModelFile::parse(R"({"format": "nnergy-predictor", "format_version": 1e999})", "big.nnp",
                     registry_);
    FAIL() << "expected InvalidInput";
  } catch (const InvalidInput& e) {
    EXPECT_THAT(e.what(), HasSubstr("big.nnp: not an nnergy model file: not valid JSON"));
  }
}

// Security review: a format_version nested 100,000 deep went into the message through a recursive
// dump() and overflowed the stack (SIGSEGV).
TEST_F(ModelFileTest, DeeplyNestedFileIsInvalidInput) {
  try {
    ModelFile::parse(R"({"format": "nnergy-predictor", "format_version": )" +
                         test_support::nested_json_arrays() + "}",
                     "deep.nnp", registry_);
    FAIL() << "expected InvalidInput";
  } catch (const InvalidInput& e) {
    EXPECT_THAT(e.what(), HasSubstr("deep.nnp: JSON nested deeper than 256 levels"));
  }
}

TEST_F(ModelFileTest, SavingIntoAMissingDirectoryWritesNothing) {
  const ModelFile model = ModelFile::train(table_, registry_, settings_);
  try {
    model.save(file("no-such-dir/m.nnp"));
    FAIL() << "expected InvalidInput";
  } catch (const InvalidInput& e) {
    EXPECT_THAT(e.what(), HasSubstr("no-such-dir"));
  }
  EXPECT_FALSE(std::filesystem::exists(file("no-such-dir")));
}

}  // namespace
}  // namespace nnergy::learn
