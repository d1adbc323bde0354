#include "nnergy/regress/analytical_regressor.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "nnergy/core/error.h"

namespace nnergy::regress {
namespace {

using ::testing::HasSubstr;

features::FeatureMatrix analytical_columns() {
  features::FeatureMatrix x;
  x.names = {"flop_count", "analytical_time_s", "analytical_power_w"};
  x.add_row(std::vector<double>{1e9, 2e-4, 250}, "Conv");
  x.add_row(std::vector<double>{1e6, 5e-6, 120}, "Relu");
  return x;
}

const std::vector<double> kMeasured = {3e-4, 7e-6};

TEST(AnalyticalRegressorTest, PredictsTheTargetsAnalyticalColumn) {
  const features::FeatureMatrix x = analytical_columns();
  AnalyticalRegressor time;
  time.fit(x, kMeasured, {});
  const auto t = time.predict(x);
  EXPECT_EQ(t[0].value, 2e-4);
  EXPECT_EQ(t[1].value, 5e-6);
  EXPECT_EQ(t[0].stddev, 0);
  EXPECT_EQ(time.save()["settings"]["target"], "time_s");

  AnalyticalRegressor power;
  FitOptions options;
  options.extra = {{"target", "power_w"}};
  power.fit(x, std::vector<double>{300, 100}, options);
  const auto p = power.predict(x);
  EXPECT_EQ(p[0].value, 250);
  EXPECT_EQ(p[1].value, 120);
  ASSERT_EQ(power.feature_importance().size(), 1U);
  EXPECT_EQ(power.feature_importance()[0].first, "analytical_power_w");

  AnalyticalRegressor loaded;
  loaded.load(power.save());
  EXPECT_EQ(loaded.predict(x)[0].value, 250);
}

TEST(AnalyticalRegressorTest, MissingColumnOrSettingIsInvalidInput) {
  features::FeatureMatrix x;
  x.names = {"flop_count"};
  x.add_row(std::vector<double>{1e9}, "Conv");
  try {
    AnalyticalRegressor().fit(x, std::vector<double>{1e-3}, {});
    ADD_FAILURE() << "no InvalidInput";
  } catch (const InvalidInput& e) {
    EXPECT_THAT(e.what(), HasSubstr("no feature column 'analytical_time_s'"));
  }
  FitOptions options;
  options.extra = {{"target", "energy_j"}};
  EXPECT_THROW(AnalyticalRegressor().fit(analytical_columns(), kMeasured, options), InvalidInput);
  options.extra = {{"rounds", 3}};
  EXPECT_THROW(AnalyticalRegressor().fit(analytical_columns(), kMeasured, options), InvalidInput);
}

}  // namespace
}  // namespace nnergy::regress
