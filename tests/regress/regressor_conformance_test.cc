// One suite, every Regressor: the contract of regress/regressor.h checked on synthetic ops
// encoded by the real FeatureEncoder, so that every named column a regressor relies on exists.

#include "regressor_conformance.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <map>
#include <memory>
#include <random>
#include <set>

#include "nnergy/core/error.h"
#include "nnergy/core/statistics.h"
#include "nnergy/device/device_catalog.h"
#include "nnergy/features/feature_encoder.h"
#include "nnergy/graph/op_descriptor.h"

namespace nnergy::regress {
namespace {

// Every regressor must explain this much of the variance of held-out rows whose time is the
// analytical time with a 5 % log-normal noise. Op sizes span ~3 orders of magnitude on a coarse
// grid (54 Conv, 27 Gemm, 9 Relu shapes for 240 ops), so most held-out shapes were seen in
// training: trees interpolate but cannot extrapolate, and this suite checks the contract, not
// extrapolation (hybrid_regressor_test does).
constexpr double kMinHeldOutR2 = 0.9;
constexpr double kNoiseSigma = 0.05;
constexpr std::size_t kOps = 240;
constexpr std::size_t kHoldOutEvery = 4;  // every 4th op is held out

struct SyntheticData {
  features::FeatureMatrix train;
  features::FeatureMatrix test;
  std::vector<double> y_train;
  std::vector<double> y_test;
};

graph::OpDescriptor synthetic_op(std::size_t i, std::mt19937_64& random) {
  const auto pick = [&](std::initializer_list<int> values) {
    std::uniform_int_distribution<std::size_t> index(0, values.size() - 1);
    return *(values.begin() + index(random));
  };
  graph::OpDescriptor op;
  op.signature = "synthetic-" + std::to_string(i);
  op.dtype = graph::DataType::kFloat32;
  const auto input = [&](std::vector<int> shape) {
    op.inputs.push_back({graph::TensorRole::kActivation, graph::Shape(shape.begin(), shape.end()),
                         graph::DataType::kFloat32, false});
  };
  graph::PassCost cost;
  switch (i % 3) {
    case 0: {
      const double cin = pick({32, 64, 128});
      const double cout = pick({32, 64, 128});
      const double hw = pick({14, 28, 56});
      const double k = pick({1, 3});
      op.op_type = "Conv";
      op.op_class = graph::OpClass::kMatrix;
      input({1, static_cast<int>(cin), static_cast<int>(hw), static_cast<int>(hw)});
      input({static_cast<int>(cout), static_cast<int>(cin), static_cast<int>(k),
             static_cast<int>(k)});
      op.attributes = {{"kernel_shape", std::vector<double>{k, k}},
                       {"group", std::int64_t{1}},
                       {"pads", std::vector<double>{k / 2, k / 2, 0, 0}}};
      cost.mac_count = cin * cout * hw * hw * k * k;
      cost.flop_count = 2 * cost.mac_count;
      cost.byte_count = 4 * (cin * hw * hw + cout * cin * k * k + cout * hw * hw);
      op.parameter_count = static_cast<std::int64_t>(cout * cin * k * k);
      break;
    }
    case 1: {
      const double m = pick({1, 8, 32});
      const double k = pick({256, 1024, 4096});
      const double n = pick({256, 1000, 4096});
      op.op_type = "Gemm";
      op.op_class = graph::OpClass::kMatrix;
      input({static_cast<int>(m), static_cast<int>(k)});
      op.attributes = {{"transB", std::int64_t{1}}};
      cost.mac_count = m * k * n;
      cost.flop_count = 2 * cost.mac_count;
      cost.byte_count = 4 * (m * k + k * n + m * n);
      op.parameter_count = static_cast<std::int64_t>(k * n);
      break;
    }
    default: {
      const double c = pick({16, 64, 256});
      const double hw = pick({28, 56, 112});
      op.op_type = "Relu";
      op.op_class = graph::OpClass::kElementwise;
      input({1, static_cast<int>(c), static_cast<int>(hw), static_cast<int>(hw)});
      cost.flop_count = c * hw * hw;
      cost.byte_count = 8 * c * hw * hw;
      break;
    }
  }
  cost.kernel_count = 1;
  op.inference = cost;
  op.training_forward = cost;
  op.backward = cost * 2;
  return op;
}

const SyntheticData& synthetic() {
  static const SyntheticData data = [] {
    std::mt19937_64 random(42);
    std::vector<graph::OpDescriptor> ops;
    for (std::size_t i = 0; i < kOps; ++i) ops.push_back(synthetic_op(i, random));
    const auto catalog =
        device::DeviceCatalog::load(std::filesystem::path(NNERGY_TEST_DATA_DIR) / "devices.json");
    const features::FeatureEncoder encoder = features::FeatureEncoder::fit(ops);
    const features::FeatureContext context{.device = &catalog.find("a100-40gb")};
    SyntheticData out{encoder.empty_matrix(), encoder.empty_matrix(), {}, {}};
    const std::size_t analytical = out.train.column("analytical_time_s");
    std::normal_distribution<double> noise(0, kNoiseSigma);
    for (std::size_t i = 0; i < ops.size(); ++i) {
      const bool test = i % kHoldOutEvery == 0;
      features::FeatureMatrix& matrix = test ? out.test : out.train;
      encoder.append(matrix, ops[i], context);
      const double y = matrix.row(matrix.rows() - 1)[analytical] * std::exp(noise(random));
      (test ? out.y_test : out.y_train).push_back(y);
    }
    return out;
  }();
  return data;
}

FitOptions options() {
  FitOptions o;
  o.seed = 7;
  o.extra = {{"target", "time_s"}};
  return o;
}

std::string test_name(const ::testing::TestParamInfo<std::string>& info) {
  std::string name = info.param;
  std::replace_if(
      name.begin(), name.end(), [](char c) { return !std::isalnum(static_cast<unsigned char>(c)); },
      '_');
  return name;
}

class RegressorConformance : public ::testing::TestWithParam<std::string> {
 protected:
  std::unique_ptr<Regressor> fresh() const {
    return testing::conformance_registry().create(GetParam());
  }

  // The regressor `name` fitted on the training rows, fitted once per test binary. The cache is
  // never destroyed: XGBoost frees its thread-local state at exit before static destructors run,
  // and freeing a booster after that crashes.
  static const Regressor& fitted(const std::string& name) {
    static auto* cache = new std::map<std::string, std::unique_ptr<Regressor>>();
    auto& slot = (*cache)[name];
    if (!slot) {
      slot = testing::conformance_registry().create(name);
      slot->fit(synthetic().train, synthetic().y_train, options());
    }
    return *slot;
  }
  const Regressor& fitted() const { return fitted(GetParam()); }
};

TEST_P(RegressorConformance, NameAndDescription) {
  EXPECT_EQ(fresh()->name(), GetParam());
  EXPECT_FALSE(fitted().description().empty());
}

TEST_P(RegressorConformance, HeldOutRowsAreAccurate) {
  const auto predictions = fitted().predict(synthetic().test);
  ASSERT_EQ(predictions.size(), synthetic().y_test.size());
  std::vector<double> values;
  for (const Prediction& p : predictions) values.push_back(p.value);
  EXPECT_GE(statistics::r_squared(synthetic().y_test, values), kMinHeldOutR2);
}

TEST_P(RegressorConformance, PredictionsArePositiveAndFinite) {
  for (const features::FeatureMatrix* x : {&synthetic().train, &synthetic().test}) {
    for (const Prediction& p : fitted().predict(*x)) {
      EXPECT_TRUE(std::isfinite(p.value) && p.value > 0) << p.value;
      EXPECT_TRUE(std::isfinite(p.stddev) && p.stddev >= 0) << p.stddev;
    }
  }
}

TEST_P(RegressorConformance, SavedTextLoadsIntoTheSameModel) {
  const std::string text = fitted().save().dump();
  const auto loaded = fresh();
  loaded->load(nlohmann::json::parse(text));
  const auto expected = fitted().predict(synthetic().test);
  const auto actual = loaded->predict(synthetic().test);
  ASSERT_EQ(actual.size(), expected.size());
  for (std::size_t i = 0; i < actual.size(); ++i) {
    EXPECT_EQ(actual[i].value, expected[i].value) << i;
    EXPECT_EQ(actual[i].stddev, expected[i].stddev) << i;
  }
  EXPECT_EQ(loaded->feature_importance(), fitted().feature_importance());
}

TEST_P(RegressorConformance, SameSeedSameModel) {
  const auto again = fresh();
  again->fit(synthetic().train, synthetic().y_train, options());
  const auto expected = fitted().predict(synthetic().test);
  const auto actual = again->predict(synthetic().test);
  ASSERT_EQ(actual.size(), expected.size());
  for (std::size_t i = 0; i < actual.size(); ++i) {
    EXPECT_EQ(actual[i].value, expected[i].value) << i;
    EXPECT_EQ(actual[i].stddev, expected[i].stddev) << i;
  }
}

TEST_P(RegressorConformance, OtherColumnsAreInvalidInput) {
  const features::FeatureMatrix& test = synthetic().test;
  features::FeatureMatrix renamed = test;
  renamed.names.back() += "_renamed";
  EXPECT_THROW(fitted().predict(renamed), InvalidInput);

  features::FeatureMatrix swapped = test;
  std::swap(swapped.names[0], swapped.names[1]);
  EXPECT_THROW(fitted().predict(swapped), InvalidInput);

  features::FeatureMatrix fewer;
  fewer.names.assign(test.names.begin(), test.names.end() - 1);
  for (std::size_t i = 0; i < test.rows(); ++i) {
    const auto row = test.row(i);
    fewer.add_row(row.first(row.size() - 1), test.families[i]);
  }
  EXPECT_THROW(fitted().predict(fewer), InvalidInput);
}

TEST_P(RegressorConformance, BadTargetsAreInvalidInput) {
  const features::FeatureMatrix& x = synthetic().train;
  const std::vector<double>& y = synthetic().y_train;
  const std::vector<double> shorter(y.begin(), y.end() - 1);
  EXPECT_THROW(fresh()->fit(x, shorter, options()), InvalidInput);
  for (const double bad : {0.0, -1e-3, std::nan(""), static_cast<double>(INFINITY)}) {
    std::vector<double> broken = y;
    broken[broken.size() / 2] = bad;
    EXPECT_THROW(fresh()->fit(x, broken, options()), InvalidInput) << bad;
  }
}

TEST_P(RegressorConformance, OtherModelsAreInvalidInput) {
  EXPECT_THROW(fresh()->load(nlohmann::json::array()), InvalidInput);
  nlohmann::json other = fitted().save();
  other["regressor"] = "not-" + GetParam();
  EXPECT_THROW(fresh()->load(other), InvalidInput);
  nlohmann::json future = fitted().save();
  future["format_version"] = 999;
  EXPECT_THROW(fresh()->load(future), InvalidInput);
  for (const std::string& name : testing::conformance_registry().names()) {
    if (name == GetParam()) continue;
    EXPECT_THROW(fresh()->load(fitted(name).save()), InvalidInput) << name;
  }
}

TEST_P(RegressorConformance, FeatureImportanceSharesKnownColumns) {
  const auto importance = fitted().feature_importance();
  if (importance.empty()) return;  // the model has none to give
  const std::set<std::string> columns(synthetic().train.names.begin(),
                                      synthetic().train.names.end());
  double total = 0;
  for (std::size_t i = 0; i < importance.size(); ++i) {
    EXPECT_TRUE(columns.contains(importance[i].first)) << importance[i].first;
    EXPECT_GE(importance[i].second, 0);
    if (i > 0) {
      EXPECT_LE(importance[i].second, importance[i - 1].second);
    }
    total += importance[i].second;
  }
  EXPECT_NEAR(total, 1, 1e-9);
}

TEST_P(RegressorConformance, NoRowsNoPredictions) {
  const std::vector<std::size_t> none;
  EXPECT_TRUE(fitted().predict(synthetic().test.select(none)).empty());
}

std::vector<std::string> registry_names() {
  std::vector<std::string> names;
  for (const std::string& name : testing::conformance_registry().names()) {
    names.push_back(name);
  }
  return names;
}

INSTANTIATE_TEST_SUITE_P(Registry, RegressorConformance, ::testing::ValuesIn(registry_names()),
                         test_name);

}  // namespace
}  // namespace nnergy::regress
