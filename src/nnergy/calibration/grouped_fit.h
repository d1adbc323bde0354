#pragma once

// What the kernel model's per-class fits share (attention, collectives): rows grouped by library
// and parameter key, each group fitted by Levenberg–Marquardt on ln(predicted/measured) with weak
// priors, scored leave-one-GPU-out and in sample, and the scores turned into the ± and the
// accuracy line the outputs quote. A class supplies how its parameters are encoded and how its
// model times a row.

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <functional>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "nnergy/calibration/kernel_fit.h"
#include "nnergy/calibration/least_squares.h"

namespace nnergy::calibration {

/// One kernel class's fit. Row has device_id, software and latency_s.
template <typename Row, typename Params>
struct GroupedFit {
  int parameter_count = 0;
  std::function<Params(const Eigen::VectorXd&)> decode;
  std::function<Eigen::VectorXd(const Params&)> encode;
  /// The group a row belongs to: (library or engine, parameter key).
  std::function<std::pair<std::string, std::string>(const Row&)> group;
  /// The model's time for a row with explicit parameters, s.
  std::function<double(const Row&, const Params&)> time;
  /// The parameters fitted parameters give a row (with their fallbacks), and where they go.
  std::function<Params(const kernel::KernelParameters&, const Row&)> lookup;
  std::function<void(kernel::KernelParameters&, const std::string&, const std::string&,
                     const Params&)>
      store;
  std::string kernels;        ///< "attention kernels", for fitted_on
  std::string sigma_prefix;   ///< prefix of the time_log_sigma keys ("" or "collective ")
  std::string accuracy_what;  ///< "Attention time"
};

/// The GEMM parameters in the fitted scale (logit of the efficiencies and the overlap loss, log
/// of the times, depth and exponent), and back: the GEMMs' and the MoE layers' fits share them
/// (defined in kernel_fit.cc).
inline constexpr int kGemmParameterCount = 7;
Eigen::VectorXd encode_gemm_parameters(const kernel::GemmParameters& p);
kernel::GemmParameters decode_gemm_parameters(const Eigen::VectorXd& x);

// As the GEMM fit's: weak priors in the fitted scale, and groups too small to fit.
inline constexpr double kGroupedPriorSigma = 10.0;
inline constexpr std::size_t kGroupedMinRows = 20;

/// Fits `rows` into `fit.parameters` and appends their held-out and in-sample scores; returns
/// the accuracy line. `prior` is the class's default parameters.
template <typename Row, typename Params>
std::string fit_grouped(const std::vector<Row>& rows, const GroupedFit<Row, Params>& spec,
                        const Params& prior_params, KernelFit& fit) {
  if (rows.empty()) return "";
  using Ratios = std::map<std::tuple<std::string, std::string, std::string>, std::vector<double>>;
  const auto fit_group = [&](const std::vector<const Row*>& members) {
    const Eigen::VectorXd prior = spec.encode(prior_params);
    ResidualProblem problem;
    problem.parameters = spec.parameter_count;
    problem.residuals = static_cast<int>(members.size()) + spec.parameter_count;
    problem.evaluate = [&](const Eigen::VectorXd& x, Eigen::VectorXd& f) {
      const Params p = spec.decode(x);
      for (std::size_t i = 0; i < members.size(); ++i)
        f[static_cast<Eigen::Index>(i)] =
            std::log(spec.time(*members[i], p) / members[i]->latency_s);
      for (int j = 0; j < spec.parameter_count; ++j)
        f[static_cast<Eigen::Index>(members.size()) + j] = (x[j] - prior[j]) / kGroupedPriorSigma;
    };
    Params fitted = spec.decode(minimize_residuals(problem, prior));
    fitted.measurements = static_cast<int>(members.size());
    std::set<std::string> gpus;
    std::set<std::string> software;
    for (const Row* r : members) {
      gpus.insert(r->device_id);
      software.insert(r->software);
    }
    fitted.fitted_on = fmt::format("{} {} measured on {} ({})", members.size(), spec.kernels,
                                   fmt::join(gpus, ", "), fmt::join(software, ", "));
    return fitted;
  };
  const auto fit_all = [&](const std::vector<const Row*>& use) {
    std::map<std::pair<std::string, std::string>, std::vector<const Row*>> groups;
    for (const Row* r : use) groups[spec.group(*r)].push_back(r);
    kernel::KernelParameters k = fit.parameters;
    for (const auto& [key, members] : groups)
      if (members.size() >= kGroupedMinRows)
        spec.store(k, key.first, key.second, fit_group(members));
    return k;
  };
  const auto add_ratios = [&](const std::vector<const Row*>& use, const kernel::KernelParameters& k,
                              Ratios& out) {
    for (const Row* r : use) {
      const auto [library, key] = spec.group(*r);
      out[{r->device_id, library, spec.sigma_prefix + key}].push_back(
          spec.time(*r, spec.lookup(k, *r)) / r->latency_s);
    }
  };
  const auto scores = [](const Ratios& ratios) {
    std::vector<KernelScore> out;
    for (const auto& [key, r] : ratios)
      out.push_back(score_of(std::get<0>(key), std::get<1>(key), std::get<2>(key), "time", r));
    return out;
  };

  std::vector<const Row*> all;
  std::set<std::string> gpus;
  for (const Row& r : rows) {
    all.push_back(&r);
    gpus.insert(r.device_id);
  }
  Ratios held_out;
  for (const std::string& gpu : gpus) {
    std::vector<const Row*> train;
    std::vector<const Row*> test;
    for (const Row* r : all) (r->device_id == gpu ? test : train).push_back(r);
    add_ratios(test, fit_all(train), held_out);
  }
  const std::vector<KernelScore> out_of_sample = scores(held_out);
  fit.parameters = fit_all(all);
  Ratios own;
  add_ratios(all, fit.parameters, own);
  const std::vector<KernelScore> in_sample = scores(own);
  fit.out_of_sample.insert(fit.out_of_sample.end(), out_of_sample.begin(), out_of_sample.end());
  fit.in_sample.insert(fit.in_sample.end(), in_sample.begin(), in_sample.end());
  for (const KernelScore& s : out_of_sample)
    fit.parameters.time_log_sigma[s.format] = pooled_log_rms(out_of_sample, "time", s.format);
  return accuracy_line(out_of_sample, "time", spec.accuracy_what);
}

}  // namespace nnergy::calibration
