#include "nnergy/regress/poly_lasso_regressor.h"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <random>

#include "nnergy/core/error.h"
#include "nnergy/core/json_document.h"
#include "nnergy/regress/regressor_checks.h"

// The Lasso is solved here by hand with Eigen: none of nnergy's dependencies has a Lasso solver
// (glmnet and scikit-learn are Fortran/Python; mlpack's LARS would add a large library for one
// solver), and cyclic coordinate descent (Friedman, Hastie & Tibshirani 2010, "covariance
// updates") is a few dozen lines.

namespace nnergy::regress {
namespace {

using Eigen::Index;
using Eigen::MatrixXd;
using Eigen::VectorXd;

const std::string kRegressorName = "poly-lasso";
/// The λ path ends at this fraction of λ_max (glmnet's default for n > p).
constexpr double kLambdaMinRatio = 1e-3;
/// Predictions stay within [min y / k, max y · k] of the training targets.
constexpr double kPredictionRangeFactor = 1e3;
/// CV RMSEs within this fraction of the best count as ties (the simpler model wins) ...
constexpr double kTieRelative = 1e-3;
/// ... or within this fraction of the target's standard deviation (noise-free data, where the
/// best RMSE is rounding noise).
constexpr double kTieAbsolute = 1e-9;
/// Coordinate descent stops when no coefficient moves the fit by more than this fraction of the
/// target's standard deviation in one sweep (glmnet's default, ΔRSS below 10⁻⁷ of the total,
/// is about 3·10⁻⁴ in these units). Strongly correlated polynomial terms converge slowly, so a
/// λ also stops after kMaxSweeps sweeps; the next λ's warm start continues from there.
constexpr double kConvergence = 1e-5;
constexpr int kMaxSweeps = 2000;
/// The least-squares refit of the kept terms (relaxed Lasso) is tried only for supports up to
/// this size and up to half the training rows: beyond that it interpolates rather than fits,
/// and its cost grows with the cube of the size.
constexpr Index kMaxRelaxedTerms = 100;
/// Ridge added to the refit's normal equations: z-scored terms have unit diagonal, so this only
/// matters for exactly collinear terms.
constexpr double kRefitRidge = 1e-10;

/// Special terms of seed 004 Eq. 1 (second sum): operation counts, memory traffic and the
/// bounds derived from them. Entered linearly when not among the polynomial's base features.
const std::vector<std::string> kSpecialTerms = {"flop_count",          "byte_count",
                                                "parameter_count",     "roofline_time_s",
                                                "analytical_time_s",   "analytical_power_w",
                                                "log_flop_count",      "log_byte_count",
                                                "log_roofline_time_s", "intensity_flop_per_byte"};

struct Settings {
  std::string target = "time_s";
  std::string transform = "log";
  int max_degree = 3;
  int max_terms = 500;
  int min_family_rows = 10;  ///< default: folds
  int folds = 10;
  int lambda_count = 40;

  nlohmann::json to_json() const {
    return {{"target", target},
            {"transform", transform},
            {"max_degree", max_degree},
            {"max_terms", max_terms},
            {"min_family_rows", min_family_rows},
            {"folds", folds},
            {"lambda_count", lambda_count}};
  }
};

int integer_option(const nlohmann::json& extra, const char* key, int fallback, int low, int high) {
  if (!extra.contains(key)) {
    return fallback;
  }
  const nlohmann::json& value = extra.at(key);
  if (!value.is_number_integer() || value.get<std::int64_t>() < low ||
      value.get<std::int64_t>() > high) {
    throw InvalidInput(kRegressorName + ": option '" + key + "' must be an integer " +
                       std::to_string(low) + "–" + std::to_string(high) + ", got " +
                       core::describe_json_value(value));
  }
  return value.get<int>();
}

std::string choice_option(const nlohmann::json& extra, const char* key, std::string fallback,
                          const std::vector<std::string>& choices) {
  if (!extra.contains(key)) {
    return fallback;
  }
  const nlohmann::json& value = extra.at(key);
  if (!value.is_string() ||
      std::find(choices.begin(), choices.end(), value.get<std::string>()) == choices.end()) {
    throw InvalidInput(kRegressorName + ": option '" + key + "' must be one of " +
                       join_with_commas(choices) + ", got " + core::describe_json_value(value));
  }
  return value.get<std::string>();
}

Settings parse_settings(const nlohmann::json& extra) {
  check_setting_names(kRegressorName, extra,
                      {"target", "transform", "max_degree", "max_terms", "folds", "min_family_rows",
                       "lambda_count"});
  Settings s;
  s.target = target_setting(kRegressorName, extra);
  s.transform = choice_option(extra, "transform", s.transform, {"log", "identity"});
  s.max_degree = integer_option(extra, "max_degree", s.max_degree, 1, 3);
  s.max_terms = integer_option(extra, "max_terms", s.max_terms, 1, 5000);
  s.folds = integer_option(extra, "folds", s.folds, 2, 20);
  s.min_family_rows =
      integer_option(extra, "min_family_rows", s.folds, s.folds, std::numeric_limits<int>::max());
  s.lambda_count = integer_option(extra, "lambda_count", s.lambda_count, 2, 200);
  return s;
}

double soft_threshold(double z, double gamma) {
  if (z > gamma) {
    return z - gamma;
  }
  if (z < -gamma) {
    return z + gamma;
  }
  return 0;
}

/// Lasso by cyclic coordinate descent in covariance form: minimises
/// ½ βᵀGβ − cᵀβ + λ‖β‖₁, which is (1/2n)‖t − Sβ‖² + λ‖β‖₁ up to a constant for centered data
/// with G = SᵀS/n and c = Sᵀt/n. `beta` is the warm start and the result; `g` = Gβ is kept in
/// step. After each full sweep, sweeps over the non-zero coefficients only run to convergence
/// (the active-set strategy of glmnet), then a full sweep checks that no other term enters.
/// During the active sweeps only the active entries of g are kept current (O(|A|) per update
/// instead of O(p)); g is rebuilt before the next full sweep.
void coordinate_descent(const MatrixXd& gram, const VectorXd& c, double lambda, double tolerance,
                        VectorXd& beta, VectorXd& g) {
  const Index p = c.size();
  // Moves β_j to its minimiser given the others; returns the change of the fit, |Δβ_j|·√G_jj.
  const auto update = [&](Index j, const std::vector<Index>* active) {
    const double gjj = gram(j, j);
    if (gjj <= 0) {
      return 0.0;
    }
    const double updated = soft_threshold(c(j) - g(j) + gjj * beta(j), lambda) / gjj;
    const double delta = updated - beta(j);
    if (delta == 0) {
      return 0.0;
    }
    beta(j) = updated;
    if (active == nullptr) {
      g.noalias() += gram.col(j) * delta;
    } else {
      for (const Index a : *active) {
        g(a) += gram(a, j) * delta;
      }
    }
    return std::abs(delta) * std::sqrt(gjj);
  };
  int sweeps = 0;
  std::vector<Index> active;
  while (sweeps < kMaxSweeps) {
    double change = 0;
    for (Index j = 0; j < p; ++j) {
      change = std::max(change, update(j, nullptr));
    }
    ++sweeps;
    if (change < tolerance) {
      return;
    }
    active.clear();
    for (Index j = 0; j < p; ++j) {
      if (beta(j) != 0) {
        active.push_back(j);
      }
    }
    while (sweeps < kMaxSweeps) {
      double active_change = 0;
      for (const Index j : active) {
        active_change = std::max(active_change, update(j, &active));
      }
      ++sweeps;
      if (active_change < tolerance) {
        break;
      }
    }
    g.setZero();
    for (const Index a : active) {
      g.noalias() += gram.col(a) * beta(a);
    }
  }
}

std::vector<Index> support_of(const VectorXd& beta) {
  std::vector<Index> support;
  for (Index j = 0; j < beta.size(); ++j) {
    if (beta(j) != 0) {
      support.push_back(j);
    }
  }
  return support;
}

/// Least-squares coefficients of the terms in `support` (relaxed Lasso with φ = 0), zero
/// elsewhere; nullopt when the support is too large to refit.
std::optional<VectorXd> refit(const MatrixXd& gram, const VectorXd& c,
                              const std::vector<Index>& support, Index rows) {
  const Index k = static_cast<Index>(support.size());
  VectorXd beta = VectorXd::Zero(c.size());
  if (k == 0) {
    return beta;
  }
  if (k > kMaxRelaxedTerms || 2 * k > rows) {
    return std::nullopt;
  }
  MatrixXd sub(k, k);
  VectorXd rhs(k);
  for (Index a = 0; a < k; ++a) {
    rhs(a) = c(support[a]);
    for (Index b = 0; b < k; ++b) {
      sub(a, b) = gram(support[a], support[b]);
    }
    sub(a, a) += kRefitRidge;
  }
  const Eigen::LDLT<MatrixXd> solver(sub);
  if (solver.info() != Eigen::Success) {
    return std::nullopt;
  }
  const VectorXd solution = solver.solve(rhs);
  if (!solution.allFinite()) {
    return std::nullopt;
  }
  for (Index a = 0; a < k; ++a) {
    beta(support[a]) = solution(a);
  }
  return beta;
}

/// All monomials of total degree 1..degree over `count` variables, as (variable, power) lists,
/// by degree and then lexicographically.
std::vector<std::vector<std::pair<std::size_t, int>>> monomials(std::size_t count, int degree) {
  std::vector<std::vector<std::pair<std::size_t, int>>> out;
  std::vector<std::size_t> factors;
  const auto extend = [&](auto&& self, std::size_t first, int remaining) -> void {
    if (remaining == 0) {
      std::vector<std::pair<std::size_t, int>> powers;
      for (const std::size_t f : factors) {
        if (!powers.empty() && powers.back().first == f) {
          ++powers.back().second;
        } else {
          powers.emplace_back(f, 1);
        }
      }
      out.push_back(std::move(powers));
      return;
    }
    for (std::size_t f = first; f < count; ++f) {
      factors.push_back(f);
      self(self, f, remaining - 1);
      factors.pop_back();
    }
  };
  for (int d = 1; d <= degree; ++d) {
    extend(extend, 0, d);
  }
  return out;
}

std::string term_name(const std::vector<PolyLassoRegressor::BaseFeature>& base,
                      const std::vector<std::pair<std::size_t, int>>& powers) {
  std::string name;
  for (const auto& [index, power] : powers) {
    if (!name.empty()) {
      name += "*";
    }
    name += base[index].name;
    if (power > 1) {
      name += "^" + std::to_string(power);
    }
  }
  return name;
}

/// The base feature's raw value in `row` (before z-scoring). log1p features of a value below 0
/// (never seen in training, where the column was non-negative) use 0.
double base_raw(const PolyLassoRegressor::BaseFeature& feature, std::span<const double> row) {
  const double value = row[feature.column];
  return feature.log1p ? std::log1p(std::max(value, 0.0)) : value;
}

double term_value(const std::vector<std::pair<std::size_t, int>>& powers,
                  const std::vector<double>& z) {
  double product = 1;
  for (const auto& [index, power] : powers) {
    for (int k = 0; k < power; ++k) {
      product *= z[index];
    }
  }
  return product;
}

bool is_binary(const VectorXd& values) {
  return (values.array() == 0.0 || values.array() == 1.0).all();
}

double population_stddev(const VectorXd& values) {
  return std::sqrt((values.array() - values.mean()).square().mean());
}

/// Everything one family's fit needs: its rows and their fitted targets.
struct FamilyData {
  const features::FeatureMatrix& x;
  std::vector<std::size_t> rows;
  VectorXd fitted_target;  ///< transformed targets of `rows`
  double min_target = 0;
  double max_target = 0;
};

/// Step 1 of the class comment: a family's candidate base features, z-scored.
struct RankedFeatures {
  /// Candidates for the polynomial, most correlated with the fitted target first.
  std::vector<PolyLassoRegressor::BaseFeature> expandable;
  /// Always linear: the op one-hots of the pooled model.
  std::vector<PolyLassoRegressor::BaseFeature> linear;
};

RankedFeatures rank_features(const FamilyData& data, const Settings& s, bool pooled) {
  using BaseFeature = PolyLassoRegressor::BaseFeature;
  const Index n = static_cast<Index>(data.rows.size());
  const VectorXd centered_target = data.fitted_target.array() - data.fitted_target.mean();
  const double target_norm = centered_target.norm();
  const bool add_logs = s.target == "power_w" || s.transform == "log";

  struct Candidate {
    BaseFeature feature;
    double correlation = 0;
  };
  std::vector<Candidate> candidates;
  RankedFeatures ranked;
  const auto make = [&](std::size_t column, bool log1p, const VectorXd& values) {
    BaseFeature f;
    f.name = log1p ? "log1p(" + data.x.names[column] + ")" : data.x.names[column];
    f.column = column;
    f.log1p = log1p;
    f.mean = values.mean();
    f.stddev = population_stddev(values);
    f.min = values.minCoeff();
    f.max = values.maxCoeff();
    return f;
  };
  const auto correlation = [&](const VectorXd& values) {
    const VectorXd centered = values.array() - values.mean();
    const double denominator = centered.norm() * target_norm;
    return denominator > 0 ? std::abs(centered.dot(centered_target)) / denominator : 0.0;
  };
  for (std::size_t column = 0; column < data.x.columns(); ++column) {
    VectorXd values(n);
    for (Index i = 0; i < n; ++i) {
      values(i) = data.x.row(data.rows[static_cast<std::size_t>(i)])[column];
    }
    if ((values.array() == values(0)).all()) {
      continue;  // constant within the family: no information, and z-scoring would divide by 0
    }
    const std::string& name = data.x.names[column];
    if (name.starts_with("op=")) {
      if (pooled) {
        ranked.linear.push_back(make(column, false, values));
      }
      continue;
    }
    candidates.push_back({make(column, false, values), correlation(values)});
    if (add_logs && values.minCoeff() >= 0 && !is_binary(values) && !name.starts_with("log_")) {
      const VectorXd logs = values.array().log1p();
      candidates.push_back({make(column, true, logs), correlation(logs)});
    }
  }
  std::stable_sort(
      candidates.begin(), candidates.end(),
      [](const Candidate& a, const Candidate& b) { return a.correlation > b.correlation; });
  for (Candidate& candidate : candidates) {
    ranked.expandable.push_back(std::move(candidate.feature));
  }
  return ranked;
}

/// The largest m with C(m + degree, degree) − 1 ≤ max_terms: the number of base features whose
/// polynomial of `degree` stays within the term budget (12 for degree 3 and 500 terms).
std::size_t base_features_within_budget(int degree, int max_terms) {
  const auto terms = [degree](std::size_t m) {
    double count = 1;  // C(m + degree, degree)
    for (int k = 1; k <= degree; ++k) {
      count = count * static_cast<double>(m + static_cast<std::size_t>(k)) / k;
    }
    return count - 1;
  };
  std::size_t m = 0;
  while (terms(m + 1) <= max_terms) {
    ++m;
  }
  return m;
}

/// Step 2: the base features of one degree, expanded ones first: the best `count` candidates,
/// then the special terms among the others and the always-linear features.
std::vector<PolyLassoRegressor::BaseFeature> base_features(const RankedFeatures& ranked,
                                                           std::size_t count) {
  std::vector<PolyLassoRegressor::BaseFeature> base;
  std::vector<PolyLassoRegressor::BaseFeature> linear;
  for (const auto& candidate : ranked.expandable) {
    if (base.size() < count) {
      base.push_back(candidate);
      base.back().expanded = true;
    } else if (!candidate.log1p && std::find(kSpecialTerms.begin(), kSpecialTerms.end(),
                                             candidate.name) != kSpecialTerms.end()) {
      linear.push_back(candidate);
    }
  }
  base.insert(base.end(), linear.begin(), linear.end());
  base.insert(base.end(), ranked.linear.begin(), ranked.linear.end());
  return base;
}

/// The z-scored terms of one degree over a family's rows.
struct Design {
  std::vector<PolyLassoRegressor::BaseFeature> base;
  std::vector<std::vector<std::pair<std::size_t, int>>> powers;  ///< one per column
  VectorXd mean;
  VectorXd stddev;
  MatrixXd standardized;  ///< rows × terms, each column mean 0, population σ 1
};

Design build_design(const FamilyData& data,
                    const std::vector<PolyLassoRegressor::BaseFeature>& base, int degree) {
  std::size_t expanded = 0;
  while (expanded < base.size() && base[expanded].expanded) {
    ++expanded;
  }
  std::vector<std::vector<std::pair<std::size_t, int>>> candidates = monomials(expanded, degree);
  for (std::size_t b = expanded; b < base.size(); ++b) {
    candidates.push_back({{b, 1}});
  }
  const Index n = static_cast<Index>(data.rows.size());
  MatrixXd raw(n, static_cast<Index>(candidates.size()));
  std::vector<double> z(base.size());
  for (Index i = 0; i < n; ++i) {
    const auto row = data.x.row(data.rows[static_cast<std::size_t>(i)]);
    for (std::size_t b = 0; b < base.size(); ++b) {
      z[b] = (base_raw(base[b], row) - base[b].mean) / base[b].stddev;
    }
    for (std::size_t t = 0; t < candidates.size(); ++t) {
      raw(i, static_cast<Index>(t)) = term_value(candidates[t], z);
    }
  }
  Design design;
  design.base = base;
  std::vector<Index> kept;
  std::vector<double> means;
  std::vector<double> stddevs;
  for (Index t = 0; t < raw.cols(); ++t) {
    const VectorXd column = raw.col(t);
    const double stddev = population_stddev(column);
    // A term constant over the family (e.g. the square of a z-scored binary feature) carries
    // nothing the intercept does not.
    if (!(stddev > 1e-12 * std::max(1.0, column.cwiseAbs().maxCoeff()))) {
      continue;
    }
    kept.push_back(t);
    means.push_back(column.mean());
    stddevs.push_back(stddev);
    design.powers.push_back(candidates[static_cast<std::size_t>(t)]);
  }
  const Index p = static_cast<Index>(kept.size());
  design.mean = Eigen::Map<const VectorXd>(means.data(), p);
  design.stddev = Eigen::Map<const VectorXd>(stddevs.data(), p);
  design.standardized.resize(n, p);
  for (Index t = 0; t < p; ++t) {
    design.standardized.col(t) =
        (raw.col(kept[static_cast<std::size_t>(t)]).array() - design.mean(t)) / design.stddev(t);
  }
  return design;
}

/// Gram matrix and correlation vector of `rows` of a design, centered on those rows.
struct CenteredProblem {
  MatrixXd gram;  ///< SᵀS/n − m mᵀ
  VectorXd c;     ///< Sᵀt/n − m t̄
  VectorXd column_mean;
  double target_mean = 0;
};

CenteredProblem centered_problem(const MatrixXd& s, const VectorXd& t,
                                 const std::vector<Index>& rows) {
  const Index n = static_cast<Index>(rows.size());
  MatrixXd sub(n, s.cols());
  VectorXd target(n);
  for (Index i = 0; i < n; ++i) {
    sub.row(i) = s.row(rows[static_cast<std::size_t>(i)]);
    target(i) = t(rows[static_cast<std::size_t>(i)]);
  }
  CenteredProblem problem;
  problem.column_mean = sub.colwise().mean();
  problem.target_mean = target.mean();
  sub.rowwise() -= problem.column_mean.transpose();
  problem.gram = sub.transpose() * sub / static_cast<double>(n);
  problem.c =
      sub.transpose() * (target.array() - problem.target_mean).matrix() / static_cast<double>(n);
  return problem;
}

/// Out-of-fold residuals (target − prediction, fitted space) per λ of the plain and the
/// refitted Lasso, for one degree: one vector of all rows per λ.
struct CvResiduals {
  std::vector<VectorXd> plain;
  std::vector<VectorXd> relaxed;  ///< +∞ in the rows of a fold where a refit was not possible
};

CvResiduals cross_validate(const Design& design, const VectorXd& t, const std::vector<int>& fold_of,
                           int folds, const std::vector<double>& lambdas, double tolerance) {
  const std::size_t path = lambdas.size();
  const Index n = t.size();
  CvResiduals residuals{std::vector<VectorXd>(path, VectorXd::Zero(n)),
                        std::vector<VectorXd>(path, VectorXd::Zero(n))};
  for (int fold = 0; fold < folds; ++fold) {
    std::vector<Index> train;
    std::vector<Index> test;
    for (Index i = 0; i < n; ++i) {
      (fold_of[static_cast<std::size_t>(i)] == fold ? test : train).push_back(i);
    }
    const CenteredProblem problem = centered_problem(design.standardized, t, train);
    MatrixXd test_centered(static_cast<Index>(test.size()), design.standardized.cols());
    VectorXd test_target(static_cast<Index>(test.size()));
    for (std::size_t i = 0; i < test.size(); ++i) {
      test_centered.row(static_cast<Index>(i)) =
          design.standardized.row(test[i]) - problem.column_mean.transpose();
      test_target(static_cast<Index>(i)) = t(test[i]) - problem.target_mean;
    }
    const auto scatter = [&](const VectorXd& fold_residuals, VectorXd& all) {
      for (std::size_t i = 0; i < test.size(); ++i) {
        all(test[i]) = fold_residuals(static_cast<Index>(i));
      }
    };
    VectorXd beta = VectorXd::Zero(design.standardized.cols());
    VectorXd g = VectorXd::Zero(design.standardized.cols());
    std::vector<Index> last_support{-1};
    VectorXd relaxed_residuals;
    for (std::size_t k = 0; k < path; ++k) {
      coordinate_descent(problem.gram, problem.c, lambdas[k], tolerance, beta, g);
      scatter(test_target - test_centered * beta, residuals.plain[k]);
      const std::vector<Index> support = support_of(beta);
      if (support != last_support) {
        const std::optional<VectorXd> refitted =
            refit(problem.gram, problem.c, support, static_cast<Index>(train.size()));
        relaxed_residuals = refitted ? VectorXd(test_target - test_centered * *refitted)
                                     : VectorXd::Constant(test_target.size(),
                                                          std::numeric_limits<double>::infinity());
        last_support = support;
      }
      scatter(relaxed_residuals, residuals.relaxed[k]);
    }
  }
  return residuals;
}

/// Steps 3–4 of the class comment for one family. `out_of_fold` receives the CV residuals of
/// the chosen setting, one per row of `data`.
PolyLassoRegressor::FamilyModel fit_family(const FamilyData& data, const Settings& s, bool pooled,
                                           std::uint64_t seed, VectorXd& out_of_fold) {
  using FamilyModel = PolyLassoRegressor::FamilyModel;
  const VectorXd& t = data.fitted_target;
  const Index n = t.size();
  FamilyModel model;
  model.rows = data.rows.size();
  model.min_target = data.min_target;
  model.max_target = data.max_target;
  model.intercept = t.mean();
  const double target_sd = population_stddev(t);
  out_of_fold = VectorXd::Zero(n);
  if (!(target_sd > 0)) {
    return model;  // a constant target: the intercept is the model, exactly
  }
  const RankedFeatures ranked = rank_features(data, s, pooled);

  // The same folds for every degree, so that their CV errors compare like with like.
  std::vector<int> fold_of(static_cast<std::size_t>(n));
  {
    std::vector<std::size_t> order(static_cast<std::size_t>(n));
    std::iota(order.begin(), order.end(), 0);
    std::mt19937_64 generator(seed);
    std::shuffle(order.begin(), order.end(), generator);
    for (std::size_t i = 0; i < order.size(); ++i) {
      fold_of[order[i]] = static_cast<int>(i % static_cast<std::size_t>(s.folds));
    }
  }
  const double tolerance = kConvergence * target_sd;
  const VectorXd centered_target = t.array() - t.mean();

  struct Choice {
    int degree = 0;
    std::size_t lambda_index = 0;
    bool relaxed = false;
    double rmse = std::numeric_limits<double>::infinity();
    const VectorXd* residuals = nullptr;
  };
  std::vector<CvResiduals> residuals;
  residuals.reserve(static_cast<std::size_t>(s.max_degree));
  std::vector<Design> designs;
  std::vector<std::vector<double>> paths;
  std::vector<Choice> candidates;  // in preference order: degree, then larger λ, then plain
  double best_rmse = std::numeric_limits<double>::infinity();
  for (int degree = 1; degree <= s.max_degree; ++degree) {
    designs.push_back(build_design(
        data, base_features(ranked, base_features_within_budget(degree, s.max_terms)), degree));
    const Design& design = designs.back();
    std::vector<double> lambdas;
    if (design.standardized.cols() > 0) {
      const double lambda_max =
          (design.standardized.transpose() * centered_target).cwiseAbs().maxCoeff() /
          static_cast<double>(n);
      for (int k = 0; k < s.lambda_count; ++k) {
        lambdas.push_back(lambda_max *
                          std::pow(kLambdaMinRatio, static_cast<double>(k) / (s.lambda_count - 1)));
      }
    }
    paths.push_back(lambdas);
    if (lambdas.empty()) {
      continue;
    }
    residuals.push_back(cross_validate(design, t, fold_of, s.folds, lambdas, tolerance));
    for (std::size_t k = 0; k < lambdas.size(); ++k) {
      for (const bool relaxed : {false, true}) {
        const VectorXd& r = relaxed ? residuals.back().relaxed[k] : residuals.back().plain[k];
        const double rmse = std::sqrt(r.squaredNorm() / static_cast<double>(n));
        candidates.push_back({degree, k, relaxed, rmse, &r});
        best_rmse = std::min(best_rmse, rmse);
      }
    }
  }
  if (candidates.empty()) {
    model.cv_rmse = target_sd;
    out_of_fold = centered_target;
    return model;
  }
  const double threshold = best_rmse * (1 + kTieRelative) + kTieAbsolute * target_sd;
  const Choice choice = *std::find_if(candidates.begin(), candidates.end(),
                                      [&](const Choice& c) { return c.rmse <= threshold; });

  // Final fit on all rows along the path down to the chosen λ (warm starts).
  const Design& design = designs[static_cast<std::size_t>(choice.degree - 1)];
  const std::vector<double>& lambdas = paths[static_cast<std::size_t>(choice.degree - 1)];
  std::vector<Index> all(static_cast<std::size_t>(n));
  std::iota(all.begin(), all.end(), 0);
  const CenteredProblem problem = centered_problem(design.standardized, t, all);
  VectorXd beta = VectorXd::Zero(design.standardized.cols());
  VectorXd g = VectorXd::Zero(design.standardized.cols());
  for (std::size_t k = 0; k <= choice.lambda_index; ++k) {
    coordinate_descent(problem.gram, problem.c, lambdas[k], tolerance, beta, g);
  }
  if (choice.relaxed) {
    if (const std::optional<VectorXd> refitted =
            refit(problem.gram, problem.c, support_of(beta), n)) {
      beta = *refitted;
    }
  }

  model.degree = choice.degree;
  model.lambda = lambdas[choice.lambda_index];
  model.relaxed = choice.relaxed;
  model.cv_rmse = choice.rmse;
  out_of_fold = *choice.residuals;
  // prediction = t̄ + Σ β_j (s_j − m_j) with s_j = (term_j − mean_j)/σ_j: fold the z-scoring of
  // the terms into the coefficients, keeping only the base features the kept terms use.
  model.intercept = problem.target_mean;
  const std::vector<PolyLassoRegressor::BaseFeature>& base = design.base;
  std::vector<std::size_t> remap(base.size(), base.size());
  for (Index j = 0; j < beta.size(); ++j) {
    if (beta(j) == 0) {
      continue;
    }
    const double coefficient = beta(j) / design.stddev(j);
    model.intercept -= beta(j) * (problem.column_mean(j) + design.mean(j) / design.stddev(j));
    PolyLassoRegressor::Term term;
    for (const auto& [index, power] : design.powers[static_cast<std::size_t>(j)]) {
      if (remap[index] == base.size()) {
        remap[index] = model.base.size();
        model.base.push_back(base[index]);
      }
      term.powers.emplace_back(remap[index], power);
    }
    term.name = term_name(model.base, term.powers);
    term.coefficient = coefficient;
    term.stddev = design.stddev(j);
    model.terms.push_back(std::move(term));
  }
  return model;
}

nlohmann::json model_to_json(const PolyLassoRegressor::FamilyModel& model,
                             const std::vector<std::string>& names) {
  nlohmann::json base = nlohmann::json::array();
  for (const auto& f : model.base) {
    base.push_back({{"name", f.name},
                    {"column", names.at(f.column)},
                    {"log1p", f.log1p},
                    {"expanded", f.expanded},
                    {"mean", f.mean},
                    {"stddev", f.stddev},
                    {"min", f.min},
                    {"max", f.max}});
  }
  nlohmann::json terms = nlohmann::json::array();
  for (const auto& term : model.terms) {
    nlohmann::json powers = nlohmann::json::array();
    for (const auto& [index, power] : term.powers) {
      powers.push_back({index, power});
    }
    terms.push_back({{"name", term.name},
                     {"powers", powers},
                     {"coefficient", term.coefficient},
                     {"stddev", term.stddev}});
  }
  return {{"rows", model.rows},
          {"degree", model.degree},
          {"lambda", model.lambda},
          {"relaxed", model.relaxed},
          {"cv_rmse", model.cv_rmse},
          {"intercept", model.intercept},
          {"min_target", model.min_target},
          {"max_target", model.max_target},
          {"base_features", base},
          {"terms", terms}};
}

PolyLassoRegressor::FamilyModel model_from_json(const nlohmann::json& json,
                                                const std::vector<std::string>& names,
                                                const std::string& where) {
  const auto fail = [&](const std::string& what) {
    throw InvalidInput(kRegressorName + " model, " + where + ": " + what);
  };
  PolyLassoRegressor::FamilyModel model;
  model.rows = json.at("rows").get<std::size_t>();
  model.degree = json.at("degree").get<int>();
  model.lambda = json.at("lambda").get<double>();
  model.relaxed = json.at("relaxed").get<bool>();
  model.cv_rmse = json.at("cv_rmse").get<double>();
  model.intercept = json.at("intercept").get<double>();
  model.min_target = json.at("min_target").get<double>();
  model.max_target = json.at("max_target").get<double>();
  if (model.degree < 1 || model.degree > 3 || !(model.cv_rmse >= 0) || !(model.min_target > 0) ||
      !(model.max_target >= model.min_target) || !std::isfinite(model.intercept)) {
    fail("degree, cv_rmse or target range out of range");
  }
  for (const nlohmann::json& f : json.at("base_features")) {
    PolyLassoRegressor::BaseFeature feature;
    feature.name = f.at("name").get<std::string>();
    const std::string column = f.at("column").get<std::string>();
    const auto it = std::find(names.begin(), names.end(), column);
    if (it == names.end()) {
      fail("base feature '" + feature.name + "' uses unknown column '" + column + "'");
    }
    feature.column = static_cast<std::size_t>(it - names.begin());
    feature.log1p = f.at("log1p").get<bool>();
    feature.expanded = f.at("expanded").get<bool>();
    feature.mean = f.at("mean").get<double>();
    feature.stddev = f.at("stddev").get<double>();
    feature.min = f.at("min").get<double>();
    feature.max = f.at("max").get<double>();
    if (!std::isfinite(feature.mean) || !(feature.stddev > 0) || !std::isfinite(feature.stddev) ||
        !std::isfinite(feature.min) || !std::isfinite(feature.max) || feature.min > feature.max) {
      fail("base feature '" + feature.name + "' has a bad mean, stddev or range");
    }
    model.base.push_back(std::move(feature));
  }
  for (const nlohmann::json& t : json.at("terms")) {
    PolyLassoRegressor::Term term;
    term.name = t.at("name").get<std::string>();
    for (const nlohmann::json& pair : t.at("powers")) {
      const auto index = pair.at(0).get<std::size_t>();
      const int power = pair.at(1).get<int>();
      if (index >= model.base.size() || power < 1 || power > 3) {
        fail("term '" + term.name + "' has a bad (feature, power) pair " +
             core::describe_json_value(pair));
      }
      term.powers.emplace_back(index, power);
    }
    term.coefficient = t.at("coefficient").get<double>();
    term.stddev = t.at("stddev").get<double>();
    if (term.powers.empty() || !std::isfinite(term.coefficient)) {
      fail("term '" + term.name + "' has no factors or a non-finite coefficient");
    }
    model.terms.push_back(std::move(term));
  }
  return model;
}

}  // namespace

std::string PolyLassoRegressor::description() const {
  const int folds =
      settings_.is_object() ? settings_.value("folds", Settings{}.folds) : Settings{}.folds;
  std::string text = "NeuralPower sparse polynomial per op family (Lasso, degree and λ by " +
                     std::to_string(folds) + "-fold CV)";
  if (pooled_) {
    text += ", fitted on " + std::string(log_transform_ ? "log(" + target_ + ")" : target_) +
            " with " + std::to_string(families_.size()) + " family models + 1 pooled";
  }
  return text;
}

void PolyLassoRegressor::fit(const features::FeatureMatrix& x, std::span<const double> y,
                             const FitOptions& options) {
  const Settings s = parse_settings(options.extra);
  // A fold needs at least one held-out row.
  check_training_data(kRegressorName, x, y, static_cast<std::size_t>(s.folds));

  const bool log_transform = s.transform == "log";
  std::map<std::string, std::vector<std::size_t>> groups;
  for (std::size_t i = 0; i < x.rows(); ++i) {
    groups[x.families[i]].push_back(i);
  }
  const auto family_data = [&](std::vector<std::size_t> rows) {
    FamilyData data{x, std::move(rows), VectorXd(), 0, 0};
    data.fitted_target.resize(static_cast<Index>(data.rows.size()));
    data.min_target = std::numeric_limits<double>::infinity();
    data.max_target = 0;
    for (std::size_t i = 0; i < data.rows.size(); ++i) {
      const double value = y[data.rows[i]];
      data.fitted_target(static_cast<Index>(i)) = log_transform ? std::log(value) : value;
      data.min_target = std::min(data.min_target, value);
      data.max_target = std::max(data.max_target, value);
    }
    return data;
  };
  std::vector<std::size_t> all(x.rows());
  std::iota(all.begin(), all.end(), 0);
  VectorXd pooled_residuals;
  FamilyModel pooled = fit_family(family_data(all), s, true, options.seed, pooled_residuals);
  std::map<std::string, FamilyModel> families;
  std::map<std::string, PooledFamily> pooled_families;
  for (auto& [family, rows] : groups) {
    // The pooled model's out-of-fold error on this family's rows (rows are numbered as in x,
    // which is the order of the pooled model's rows).
    double squares = 0;
    for (const std::size_t row : rows) {
      squares +=
          pooled_residuals(static_cast<Index>(row)) * pooled_residuals(static_cast<Index>(row));
    }
    const PooledFamily by_pooled{rows.size(),
                                 std::sqrt(squares / static_cast<double>(rows.size()))};
    if (rows.size() >= static_cast<std::size_t>(s.min_family_rows)) {
      VectorXd residuals;
      FamilyModel own = fit_family(family_data(rows), s, false, options.seed, residuals);
      if (own.cv_rmse <= by_pooled.cv_rmse) {
        families.emplace(family, std::move(own));
        continue;
      }
    }
    pooled_families.emplace(family, by_pooled);
  }

  feature_names_ = x.names;
  target_ = s.target;
  log_transform_ = log_transform;
  settings_ = s.to_json();
  pooled_ = std::move(pooled);
  families_ = std::move(families);
  pooled_families_ = std::move(pooled_families);
}

const PolyLassoRegressor::FamilyModel* PolyLassoRegressor::family_model(
    const std::string& family) const {
  const auto it = families_.find(family);
  return it == families_.end() ? nullptr : &it->second;
}

const PolyLassoRegressor::FamilyModel& PolyLassoRegressor::pooled_model() const {
  if (!pooled_) {
    throw InternalError(kRegressorName + ": used before fit() or load()");
  }
  return *pooled_;
}

const std::map<std::string, PolyLassoRegressor::PooledFamily>& PolyLassoRegressor::pooled_families()
    const {
  return pooled_families_;
}

std::vector<Prediction> PolyLassoRegressor::predict(const features::FeatureMatrix& x) const {
  pooled_model();
  check_feature_names(kRegressorName, feature_names_, x);
  std::vector<Prediction> out;
  out.reserve(x.rows());
  std::vector<double> z;
  for (std::size_t i = 0; i < x.rows(); ++i) {
    const auto row = x.row(i);
    if (!std::all_of(row.begin(), row.end(), [](double v) { return std::isfinite(v); })) {
      throw InvalidInput(kRegressorName + ": row " + std::to_string(i) +
                         " has a non-finite feature value");
    }
    const FamilyModel* own = family_model(x.families[i]);
    const FamilyModel& model = own != nullptr ? *own : *pooled_;
    // σ: the model's CV RMSE, for a pooled family the pooled model's on that family's rows
    // (families never seen in training get the pooled model's overall CV RMSE).
    double sigma = model.cv_rmse;
    if (own == nullptr) {
      const auto it = pooled_families_.find(x.families[i]);
      if (it != pooled_families_.end()) {
        sigma = it->second.cv_rmse;
      }
    }
    z.resize(model.base.size());
    for (std::size_t b = 0; b < model.base.size(); ++b) {
      const PolyLassoRegressor::BaseFeature& f = model.base[b];
      z[b] = (std::clamp(base_raw(f, row), f.min, f.max) - f.mean) / f.stddev;
    }
    double fitted = model.intercept;
    for (const Term& term : model.terms) {
      fitted += term.coefficient * term_value(term.powers, z);
    }
    const double low = model.min_target / kPredictionRangeFactor;
    const double high = model.max_target * kPredictionRangeFactor;
    if (log_transform_) {
      const double value = std::exp(std::clamp(fitted, std::log(low), std::log(high)));
      out.push_back({value, value * sigma});  // delta method: σ_y ≈ y·σ_log y
    } else {
      out.push_back({std::clamp(fitted, low, high), sigma});
    }
  }
  return out;
}

nlohmann::json PolyLassoRegressor::save() const {
  const FamilyModel& pooled = pooled_model();
  nlohmann::json families = nlohmann::json::object();
  for (const auto& [family, model] : families_) {
    families[family] = model_to_json(model, feature_names_);
  }
  nlohmann::json saved = saved_model_header(kRegressorName, feature_names_);
  saved["target"] = target_;
  saved["transform"] = log_transform_ ? "log" : "identity";
  saved["settings"] = settings_;
  saved["pooled"] = model_to_json(pooled, feature_names_);
  saved["families"] = families;
  nlohmann::json pooled_families = nlohmann::json::object();
  for (const auto& [family, served] : pooled_families_) {
    pooled_families[family] = {{"rows", served.rows}, {"cv_rmse", served.cv_rmse}};
  }
  saved["pooled_families"] = pooled_families;
  return saved;
}

void PolyLassoRegressor::load(const nlohmann::json& model) {
  try {
    const std::vector<std::string> names = read_saved_model_header(kRegressorName, model);
    const auto target = saved_field(kRegressorName, model, "target").get<std::string>();
    const auto transform = saved_field(kRegressorName, model, "transform").get<std::string>();
    if ((target != "time_s" && target != "power_w") ||
        (transform != "log" && transform != "identity")) {
      throw InvalidInput(kRegressorName + ": model target '" + target + "' or transform '" +
                         transform + "' unknown");
    }
    const nlohmann::json settings = saved_field(kRegressorName, model, "settings");
    parse_settings(settings);
    FamilyModel pooled =
        model_from_json(saved_field(kRegressorName, model, "pooled"), names, "pooled model");
    std::map<std::string, FamilyModel> families;
    for (const auto& [family, json] : saved_field(kRegressorName, model, "families").items()) {
      families.emplace(family, model_from_json(json, names, "family '" + family + "'"));
    }
    std::map<std::string, PooledFamily> pooled_families;
    for (const auto& [family, json] :
         saved_field(kRegressorName, model, "pooled_families").items()) {
      const PooledFamily served{json.at("rows").get<std::size_t>(),
                                json.at("cv_rmse").get<double>()};
      if (!(served.cv_rmse >= 0) || !std::isfinite(served.cv_rmse)) {
        throw InvalidInput(kRegressorName + " model: pooled family '" + family +
                           "' has a bad cv_rmse " + core::describe_json_value(json.at("cv_rmse")));
      }
      pooled_families.emplace(family, served);
    }

    feature_names_ = names;
    target_ = target;
    log_transform_ = transform == "log";
    settings_ = settings;
    pooled_ = std::move(pooled);
    families_ = std::move(families);
    pooled_families_ = std::move(pooled_families);
  } catch (const nlohmann::json::exception& e) {
    throw InvalidInput(kRegressorName + ": malformed model JSON: " + e.what());
  }
}

std::vector<std::pair<std::string, double>> PolyLassoRegressor::feature_importance() const {
  // Share of each column: Σ over models, weighted by the rows each model serves, of the
  // standardized effect |coefficient|·σ(term), split evenly over the term's columns.
  std::vector<double> weight(feature_names_.size(), 0.0);
  const auto add = [&](const FamilyModel& model, double rows) {
    for (const Term& term : model.terms) {
      const double effect = std::abs(term.coefficient) * term.stddev * rows;
      std::vector<std::size_t> columns;
      for (const auto& [index, power] : term.powers) {
        columns.push_back(model.base[index].column);
      }
      std::sort(columns.begin(), columns.end());
      columns.erase(std::unique(columns.begin(), columns.end()), columns.end());
      for (const std::size_t column : columns) {
        weight[column] += effect / static_cast<double>(columns.size());
      }
    }
  };
  if (!pooled_) {
    return {};
  }
  for (const auto& [family, model] : families_) {
    add(model, static_cast<double>(model.rows));
  }
  std::size_t pooled_rows = 0;
  for (const auto& [family, served] : pooled_families_) {
    pooled_rows += served.rows;
  }
  add(*pooled_, static_cast<double>(pooled_rows));
  const double total = std::accumulate(weight.begin(), weight.end(), 0.0);
  if (!(total > 0)) {
    return {};
  }
  std::vector<std::pair<std::string, double>> out;
  for (std::size_t c = 0; c < weight.size(); ++c) {
    if (weight[c] > 0) {
      out.emplace_back(feature_names_[c], weight[c] / total);
    }
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  return out;
}

}  // namespace nnergy::regress
