#include "nnergy/regress/poly_lasso_regressor.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "nnergy/core/error.h"

namespace nnergy::regress {
namespace {

/// Noise-free data fitted by an exact polynomial: only rounding and the coordinate descent's
/// stopping rule separate prediction from truth.
constexpr double kExactTolerance = 1e-3;

double quadratic(double x) { return 2 + 3 * x - 0.5 * x * x; }

/// Columns x, u1, u2 (u unrelated to y), all in family `family`.
void add_rows(features::FeatureMatrix& m, std::vector<double>& y, const std::string& family,
              int count, std::uint64_t seed, double (*truth)(double)) {
  std::mt19937_64 random(seed);
  std::uniform_real_distribution<double> unit(0, 1);
  for (int i = 0; i < count; ++i) {
    const double x = 3.0 * i / (count - 1);
    m.add_row(std::vector<double>{x, unit(random), 10 * unit(random)}, family);
    y.push_back(truth(x));
  }
}

features::FeatureMatrix xu_matrix() {
  features::FeatureMatrix m;
  m.names = {"x", "u1", "u2"};
  return m;
}

FitOptions identity_options() {
  FitOptions options;
  options.extra = {{"transform", "identity"}};
  return options;
}

std::set<std::string> term_names(const PolyLassoRegressor::FamilyModel& model) {
  std::set<std::string> names;
  for (const auto& term : model.terms) {
    names.insert(term.name);
  }
  return names;
}

TEST(PolyLassoRegressor, InputsOutsideTheTrainingRangeAreClampedToIt) {
  // Fitted on x in [0, 3], the quadratic would give 2 + 300 − 5000 = −4698 at x = 100; clamped,
  // x = 100 is predicted as x = 3 and x = −50 as x = 0.
  features::FeatureMatrix train = xu_matrix();
  std::vector<double> y;
  add_rows(train, y, "F", 200, 7, quadratic);
  PolyLassoRegressor regressor;
  regressor.fit(train, y, identity_options());

  features::FeatureMatrix far = xu_matrix();
  far.add_row(std::vector<double>{100, 0.5, 5}, "F");
  far.add_row(std::vector<double>{-50, 0.5, 5}, "F");
  const std::vector<Prediction> predicted = regressor.predict(far);
  EXPECT_NEAR(predicted[0].value, quadratic(3), kExactTolerance);
  EXPECT_NEAR(predicted[1].value, quadratic(0), kExactTolerance);

  PolyLassoRegressor reloaded;
  reloaded.load(regressor.save());
  EXPECT_DOUBLE_EQ(reloaded.predict(far)[0].value, predicted[0].value);
}

TEST(PolyLassoRegressor, RecoversQuadraticSparselyAndCvPicksDegreeTwo) {
  features::FeatureMatrix train = xu_matrix();
  std::vector<double> y;
  add_rows(train, y, "F", 200, 7, quadratic);
  PolyLassoRegressor regressor;
  regressor.fit(train, y, identity_options());

  const auto* model = regressor.family_model("F");
  ASSERT_NE(model, nullptr);
  EXPECT_EQ(model->degree, 2);
  // Sparse: the unrelated u1, u2 and every product with them are dropped.
  EXPECT_EQ(term_names(*model), (std::set<std::string>{"x", "x^2"}));

  features::FeatureMatrix test = xu_matrix();
  std::vector<double> expected;
  add_rows(test, expected, "F", 37, 99, quadratic);
  const std::vector<Prediction> predicted = regressor.predict(test);
  ASSERT_EQ(predicted.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    EXPECT_NEAR(predicted[i].value, expected[i], kExactTolerance) << "row " << i;
    EXPECT_LT(predicted[i].stddev, kExactTolerance);
  }
  const auto importance = regressor.feature_importance();
  ASSERT_EQ(importance.size(), 1u);
  EXPECT_EQ(importance[0].first, "x");
  EXPECT_DOUBLE_EQ(importance[0].second, 1.0);
}

TEST(PolyLassoRegressor, OneModelPerFamilyAndPooledFallbackForSmallOrUnseenFamilies) {
  features::FeatureMatrix train = xu_matrix();
  std::vector<double> y;
  add_rows(train, y, "Linear", 60, 1, [](double x) { return 1 + 2 * x; });
  add_rows(train, y, "Quadratic", 60, 2, [](double x) { return 1 + x * x; });
  add_rows(train, y, "Rare", 5, 3, [](double x) { return 4 + x; });
  PolyLassoRegressor regressor;
  regressor.fit(train, y, identity_options());

  ASSERT_NE(regressor.family_model("Linear"), nullptr);
  ASSERT_NE(regressor.family_model("Quadratic"), nullptr);
  EXPECT_EQ(regressor.family_model("Rare"), nullptr);  // 5 rows < min_family_rows (10)
  ASSERT_EQ(regressor.pooled_families().size(), 1u);
  EXPECT_EQ(regressor.pooled_families().at("Rare").rows, 5u);
  EXPECT_EQ(regressor.family_model("Linear")->degree, 1);
  EXPECT_EQ(regressor.family_model("Quadratic")->degree, 2);
  EXPECT_EQ(regressor.pooled_model().rows, 125u);

  features::FeatureMatrix test = xu_matrix();
  test.add_row(std::vector<double>{1.5, 0.5, 5}, "Linear");
  test.add_row(std::vector<double>{1.5, 0.5, 5}, "Quadratic");
  test.add_row(std::vector<double>{1.5, 0.5, 5}, "Rare");
  test.add_row(std::vector<double>{1.5, 0.5, 5}, "NeverSeen");
  const std::vector<Prediction> predicted = regressor.predict(test);
  EXPECT_NEAR(predicted[0].value, 4.0, kExactTolerance);
  EXPECT_NEAR(predicted[1].value, 3.25, kExactTolerance);
  // Rare and unseen families share the pooled model, which cannot tell the families apart.
  EXPECT_DOUBLE_EQ(predicted[2].value, predicted[3].value);
  EXPECT_GT(predicted[2].stddev, 0.1);
}

TEST(PolyLassoRegressor, FamilyKeepsPooledModelWhenItsOwnCvErrorIsLarger) {
  // Both families follow log y = x + ε; the pooled model sees 10× the rows of family B and
  // predicts B's held-out rows better than a model of B's 12 rows alone.
  features::FeatureMatrix train;
  train.names = {"x"};
  std::vector<double> y;
  std::mt19937_64 random(3);
  std::normal_distribution<double> noise(0, 0.3);
  for (int i = 0; i < 132; ++i) {
    const double x = (i % 11) / 2.0;
    train.add_row(std::vector<double>{x}, i < 120 ? "A" : "B");
    y.push_back(std::exp(x + noise(random)));
  }
  PolyLassoRegressor regressor;
  regressor.fit(train, y, FitOptions{});
  EXPECT_EQ(regressor.family_model("B"), nullptr);  // 12 rows ≥ min_family_rows, yet pooled
  const auto& b = regressor.pooled_families().at("B");
  EXPECT_EQ(b.rows, 12u);
  // B's σ is the pooled model's out-of-fold RMSE on B's rows, near the noise level.
  EXPECT_GT(b.cv_rmse, 0.1);
  EXPECT_LT(b.cv_rmse, 0.6);
}

TEST(PolyLassoRegressor, PowerTargetAddsLogTerms) {
  features::FeatureMatrix train;
  train.names = {"batch"};
  std::vector<double> y;
  for (int i = 0; i < 80; ++i) {
    const double batch = std::pow(2.0, i / 8.0);
    train.add_row(std::vector<double>{batch}, "Conv");
    y.push_back(50 + 20 * std::log1p(batch));  // saturating power, seed 004 §3.1
  }
  FitOptions options = identity_options();
  options.extra["target"] = "power_w";
  options.extra["max_degree"] = 1;
  PolyLassoRegressor regressor;
  regressor.fit(train, y, options);
  EXPECT_EQ(term_names(*regressor.family_model("Conv")), (std::set<std::string>{"log1p(batch)"}));
  const std::vector<Prediction> predicted = regressor.predict(train);
  for (std::size_t i = 0; i < y.size(); ++i) {
    EXPECT_NEAR(predicted[i].value, y[i], kExactTolerance) << "row " << i;
  }
}

TEST(PolyLassoRegressor, LogTransformUncertaintyMatchesNoise) {
  // log y = log(1 + x) + ε, ε ~ N(0, 0.1): the CV residual σ in log space is ≈ 0.1, so the
  // delta method gives stddev ≈ 0.1·y.
  constexpr double kNoise = 0.1;
  constexpr double kSigmaTolerance = 0.02;
  features::FeatureMatrix train;
  train.names = {"x", "log_x"};
  std::vector<double> y;
  std::mt19937_64 random(5);
  std::normal_distribution<double> noise(0, kNoise);
  for (int i = 0; i < 400; ++i) {
    const double x = std::pow(10.0, 6.0 * i / 399);
    train.add_row(std::vector<double>{x, std::log1p(x)}, "MatMul");
    y.push_back((1 + x) * std::exp(noise(random)));
  }
  PolyLassoRegressor regressor;
  regressor.fit(train, y, FitOptions{});
  const std::vector<Prediction> predicted = regressor.predict(train);
  for (std::size_t i = 0; i < y.size(); i += 50) {
    EXPECT_NEAR(predicted[i].stddev / predicted[i].value, kNoise, kSigmaTolerance);
  }
  EXPECT_NEAR(regressor.family_model("MatMul")->cv_rmse, kNoise, kSigmaTolerance);
}

TEST(PolyLassoRegressor, SaveLoadGivesIdenticalPredictions) {
  features::FeatureMatrix train = xu_matrix();
  std::vector<double> y;
  add_rows(train, y, "A", 50, 11, [](double x) { return std::exp(x) + 0.3 * x * x * x; });
  add_rows(train, y, "B", 6, 12, [](double x) { return 1 + x; });
  PolyLassoRegressor original;
  original.fit(train, y, FitOptions{});
  const nlohmann::json saved = original.save();

  PolyLassoRegressor restored;
  restored.load(nlohmann::json::parse(saved.dump()));  // through text, as in a model file
  EXPECT_EQ(restored.save(), saved);
  const auto a = original.predict(train);
  const auto b = restored.predict(train);
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].value, b[i].value);
    EXPECT_EQ(a[i].stddev, b[i].stddev);
  }
  EXPECT_EQ(saved.at("regressor"), "poly-lasso");
  EXPECT_TRUE(saved.at("families").contains("A"));
  EXPECT_EQ(saved.at("pooled_families").at("B").at("rows"), 6);
}

TEST(PolyLassoRegressor, RejectsBadOptionsDataAndModels) {
  features::FeatureMatrix train = xu_matrix();
  std::vector<double> y;
  add_rows(train, y, "F", 40, 1, quadratic);
  const auto fit_with = [&](nlohmann::json extra) {
    FitOptions options;
    options.extra = std::move(extra);
    PolyLassoRegressor regressor;
    regressor.fit(train, y, options);
  };
  EXPECT_THROW(fit_with({{"max_degree", 4}}), InvalidInput);
  EXPECT_THROW(fit_with({{"max_degre", 2}}), InvalidInput);  // misspelt: not silently ignored
  EXPECT_THROW(fit_with({{"max_degree", "two"}}), InvalidInput);
  EXPECT_THROW(fit_with({{"target", "energy_j"}}), InvalidInput);
  EXPECT_THROW(fit_with({{"transform", "sqrt"}}), InvalidInput);
  EXPECT_THROW(fit_with({{"folds", 1}}), InvalidInput);
  EXPECT_THROW(fit_with({{"folds", 10}, {"min_family_rows", 5}}), InvalidInput);

  PolyLassoRegressor regressor;
  std::vector<double> bad = y;
  bad[3] = 0;
  EXPECT_THROW(regressor.fit(train, bad, FitOptions{}), InvalidInput);
  bad[3] = std::nan("");
  EXPECT_THROW(regressor.fit(train, bad, FitOptions{}), InvalidInput);
  EXPECT_THROW(regressor.fit(train, std::span<const double>(y).first(10), FitOptions{}),
               InvalidInput);
  const std::vector<std::size_t> few = {0, 1, 2, 3, 4};
  EXPECT_THROW(regressor.fit(train.select(few), std::span<const double>(y).first(5), FitOptions{}),
               InvalidInput);
  EXPECT_THROW(regressor.predict(train), InternalError);
  EXPECT_FALSE(regressor.description().empty());  // before fit() too

  regressor.fit(train, y, FitOptions{});
  features::FeatureMatrix renamed = train;
  renamed.names[1] = "v1";
  EXPECT_THROW(regressor.predict(renamed), InvalidInput);

  nlohmann::json other = regressor.save();
  other["regressor"] = "forest";
  EXPECT_THROW(PolyLassoRegressor().load(other), InvalidInput);
  nlohmann::json broken = regressor.save();
  broken["pooled"].erase("terms");
  EXPECT_THROW(PolyLassoRegressor().load(broken), InvalidInput);
  nlohmann::json unknown_column = regressor.save();
  unknown_column["feature_names"][0] = "renamed";
  EXPECT_THROW(PolyLassoRegressor().load(unknown_column), InvalidInput);
}

}  // namespace
}  // namespace nnergy::regress
