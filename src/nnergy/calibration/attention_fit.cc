#include "nnergy/calibration/attention_fit.h"

#include <fmt/format.h>

#include <cmath>
#include <map>
#include <set>

#include "nnergy/calibration/least_squares.h"

namespace nnergy::calibration {

namespace {

using Eigen::VectorXd;
using kernel::AttentionParameters;

// As the GEMM fit's: weak priors in the fitted scale, and groups too small to fit.
constexpr double kPriorSigma = 10.0;
constexpr std::size_t kMinRows = 20;
constexpr int kAttentionParameters = 7;

AttentionParameters decode(const VectorXd& x) {
  AttentionParameters p;
  p.compute_efficiency = logistic(x[0]);
  p.exp_efficiency = std::exp(x[1]);
  p.memory_efficiency = logistic(x[2]);
  p.latency_s = std::exp(x[3]);
  p.cta_s = std::exp(x[4]);
  p.overlap_loss = logistic(x[5]);
  p.saturating_ctas = std::exp(x[6]);
  return p;
}

VectorXd encode(const AttentionParameters& p) {
  VectorXd x(kAttentionParameters);
  x << logit(p.compute_efficiency), std::log(p.exp_efficiency), logit(p.memory_efficiency),
      std::log(p.latency_s), std::log(p.cta_s), logit(p.overlap_loss), std::log(p.saturating_ctas);
  return x;
}

std::string key_of(const MeasuredAttention& r) {
  return kernel::attention_parameters_key(r.shape.phase, r.format);
}

AttentionParameters fit_group(const std::vector<const MeasuredAttention*>& rows,
                              const device::DeviceCatalog& catalog) {
  std::vector<const device::DeviceSpec*> devices;
  devices.reserve(rows.size());
  for (const MeasuredAttention* r : rows) devices.push_back(&catalog.find(r->device_id));
  const VectorXd prior = encode(AttentionParameters{});
  ResidualProblem problem;
  problem.parameters = kAttentionParameters;
  problem.residuals = static_cast<int>(rows.size()) + kAttentionParameters;
  problem.evaluate = [&](const VectorXd& x, VectorXd& f) {
    const AttentionParameters p = decode(x);
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const double t = kernel::attention_time_s(*devices[i], rows[i]->shape, rows[i]->format, p,
                                                devices[i]->clock.boost_mhz);
      f[static_cast<Eigen::Index>(i)] = std::log(t / rows[i]->latency_s);
    }
    for (int j = 0; j < kAttentionParameters; ++j)
      f[static_cast<Eigen::Index>(rows.size()) + j] = (x[j] - prior[j]) / kPriorSigma;
  };
  AttentionParameters fitted = decode(minimize_residuals(problem, prior));
  fitted.measurements = static_cast<int>(rows.size());
  std::set<std::string> gpus;
  std::set<std::string> software;
  for (const MeasuredAttention* r : rows) {
    gpus.insert(r->device_id);
    software.insert(r->software);
  }
  std::string list;
  for (const std::string& g : gpus) list += (list.empty() ? "" : ", ") + g;
  std::string versions;
  for (const std::string& v : software) versions += (versions.empty() ? "" : ", ") + v;
  fitted.fitted_on =
      fmt::format("{} attention kernels measured on {} ({})", rows.size(), list, versions);
  return fitted;
}

using Groups = std::map<std::pair<std::string, std::string>, std::vector<const MeasuredAttention*>>;

Groups groups_of(const std::vector<const MeasuredAttention*>& rows) {
  Groups groups;
  for (const MeasuredAttention* r : rows) groups[{r->engine, key_of(*r)}].push_back(r);
  return groups;
}

void add_ratios(
    const std::vector<const MeasuredAttention*>& rows, const device::DeviceCatalog& catalog,
    const kernel::KernelParameters& k,
    std::map<std::tuple<std::string, std::string, std::string>, std::vector<double>>& out) {
  for (const MeasuredAttention* r : rows) {
    const device::DeviceSpec& device = catalog.find(r->device_id);
    const AttentionParameters p = k.attention_for(r->shape.phase, r->format, r->engine);
    const double t =
        kernel::attention_time_s(device, r->shape, r->format, p, device.clock.boost_mhz);
    out[{r->device_id, r->engine, key_of(*r)}].push_back(t / r->latency_s);
  }
}

kernel::KernelParameters fit_all(const std::vector<const MeasuredAttention*>& rows,
                                 const device::DeviceCatalog& catalog) {
  kernel::KernelParameters k;
  for (const auto& [key, members] : groups_of(rows)) {
    if (members.size() < kMinRows) continue;
    k.attention[key.first][key.second] = fit_group(members, catalog);
  }
  return k;
}

std::vector<KernelScore> scores_of(const std::map<std::tuple<std::string, std::string, std::string>,
                                                  std::vector<double>>& ratios) {
  std::vector<KernelScore> out;
  for (const auto& [key, r] : ratios) {
    const auto& [device, engine, format] = key;
    out.push_back(score_of(device, engine, format, "time", r));
  }
  return out;
}

}  // namespace

void fit_attention(const std::vector<MeasuredAttention>& rows, const device::DeviceCatalog& catalog,
                   KernelFit& fit) {
  if (rows.empty()) return;
  std::vector<const MeasuredAttention*> all;
  std::set<std::string> gpus;
  for (const MeasuredAttention& r : rows) {
    all.push_back(&r);
    gpus.insert(r.device_id);
  }
  std::map<std::tuple<std::string, std::string, std::string>, std::vector<double>> held_out;
  for (const std::string& gpu : gpus) {
    std::vector<const MeasuredAttention*> train;
    std::vector<const MeasuredAttention*> test;
    for (const MeasuredAttention* r : all) (r->device_id == gpu ? test : train).push_back(r);
    add_ratios(test, catalog, fit_all(train, catalog), held_out);
  }
  const std::vector<KernelScore> out_of_sample = scores_of(held_out);
  kernel::KernelParameters& k = fit.parameters;
  k.attention = fit_all(all, catalog).attention;
  std::map<std::tuple<std::string, std::string, std::string>, std::vector<double>> in_sample;
  add_ratios(all, catalog, k, in_sample);
  const std::vector<KernelScore> own = scores_of(in_sample);
  fit.out_of_sample.insert(fit.out_of_sample.end(), out_of_sample.begin(), out_of_sample.end());
  fit.in_sample.insert(fit.in_sample.end(), own.begin(), own.end());
  for (const KernelScore& s : out_of_sample)
    k.time_log_sigma[s.format] = pooled_log_rms(out_of_sample, "time", s.format);
  k.accuracy.attention = accuracy_line(out_of_sample, "time", "Attention time");
  fit.attention_rows = static_cast<int>(rows.size());
}

}  // namespace nnergy::calibration
