#include "nnergy/calibration/kernel_fit.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "nnergy/calibration/grouped_fit.h"
#include "nnergy/calibration/least_squares.h"
#include "nnergy/core/statistics.h"
#include "nnergy/kernel/gemm_model.h"
#include "nnergy/kernel/kernel_power.h"

namespace nnergy::calibration {

namespace {

using Eigen::VectorXd;
using kernel::GemmParameters;
using kernel::KernelParameters;

// Weak priors on the parameters, in their fitted scale (logit or log): they keep a parameter
// that the rows do not determine (a quantization time for a format without one) at its
// default, and pull none of the determined ones noticeably.
constexpr double kPriorSigma = 10.0;
// Groups with fewer rows are not fitted (their format takes a neighbour's parameters).
constexpr std::size_t kMinRows = 20;

GemmParameters fit_gemm(const std::vector<const MeasuredGemm*>& rows,
                        const device::DeviceCatalog& catalog) {
  std::vector<const device::DeviceSpec*> devices;
  devices.reserve(rows.size());
  for (const MeasuredGemm* r : rows) devices.push_back(&catalog.find(r->device_id));
  const VectorXd prior = encode_gemm_parameters(GemmParameters{});
  ResidualProblem problem;
  problem.parameters = kGemmParameterCount;
  problem.residuals = static_cast<int>(rows.size()) + kGemmParameterCount;
  problem.evaluate = [&](const VectorXd& x, VectorXd& f) {
    const GemmParameters p = decode_gemm_parameters(x);
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const double t = kernel::gemm_time_s(*devices[i], rows[i]->shape, rows[i]->format, p,
                                           devices[i]->clock.boost_mhz);
      f[static_cast<Eigen::Index>(i)] = std::log(t / rows[i]->latency_s);
    }
    for (int j = 0; j < kGemmParameterCount; ++j)
      f[static_cast<Eigen::Index>(rows.size()) + j] = (x[j] - prior[j]) / kPriorSigma;
  };
  GemmParameters fitted = decode_gemm_parameters(minimize_residuals(problem, prior));
  fitted.measurements = static_cast<int>(rows.size());
  std::set<std::string> gpus;
  for (const MeasuredGemm* r : rows) gpus.insert(r->device_id);
  std::string list;
  for (const std::string& g : gpus) list += (list.empty() ? "" : ", ") + g;
  fitted.fitted_on =
      fmt::format("{} GEMMs measured on {} ({})", rows.size(), list, rows.front()->software);
  return fitted;
}

// Power parameters: base, compute, memory (log scale) and one weight per format other than
// 16-bit (log scale).
void fit_power(const std::vector<const MeasuredGemm*>& rows,
               const std::vector<const MeasuredStream*>& streams,
               const device::DeviceCatalog& catalog, KernelParameters& k) {
  if (rows.size() < kMinRows) return;
  std::vector<std::string> weighted;
  for (const MeasuredGemm* r : rows) {
    const std::string name(kernel::info(r->format).name);
    if (r->format != kernel::GemmFormat::k16Bit &&
        std::find(weighted.begin(), weighted.end(), name) == weighted.end())
      weighted.push_back(name);
  }
  const int n = 3 + static_cast<int>(weighted.size());
  VectorXd prior(n);
  prior << std::log(k.power.base), std::log(k.power.compute), std::log(k.power.memory);
  for (int j = 3; j < n; ++j) prior[j] = 0;
  const auto apply = [&](const VectorXd& x, KernelParameters& out) {
    out.power.base = std::exp(x[0]);
    out.power.compute = std::exp(x[1]);
    out.power.memory = std::exp(x[2]);
    for (int j = 3; j < n; ++j) out.power.format_weight[weighted[j - 3]] = std::exp(x[j]);
  };
  ResidualProblem problem;
  problem.parameters = n;
  const int measured = static_cast<int>(rows.size() + streams.size());
  problem.residuals = measured + n;
  KernelParameters trial = k;
  problem.evaluate = [&](const VectorXd& x, VectorXd& f) {
    apply(x, trial);
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const MeasuredGemm& r = *rows[i];
      const kernel::KernelEstimate e =
          kernel::predict_gemm(catalog.find(r.device_id), r.shape, r.format, trial, r.engine);
      f[static_cast<Eigen::Index>(i)] = std::log(e.power_w / *r.power_w);
    }
    for (std::size_t i = 0; i < streams.size(); ++i) {
      f[static_cast<Eigen::Index>(rows.size() + i)] =
          std::log(stream_power_w(*streams[i], catalog, trial.power) / streams[i]->power_w);
    }
    for (int j = 0; j < n; ++j)
      f[static_cast<Eigen::Index>(measured) + j] = (x[j] - prior[j]) / kPriorSigma;
  };
  apply(minimize_residuals(problem, prior), k);
  std::set<std::string> gpus;
  for (const MeasuredGemm* r : rows) gpus.insert(r->device_id);
  for (const MeasuredStream* s : streams) gpus.insert(s->device_id);
  std::string list;
  for (const std::string& g : gpus) list += (list.empty() ? "" : ", ") + g;
  k.power.measurements = measured;
  k.power.fitted_on = fmt::format(
      "{} GEMMs of at least {:.0f} ms and {} decode-attention kernels (KV-cache streaming) of at "
      "least {:.1f} ms with sustained board power (NVML, 100 ms samples over 0.3-1 s loops) on {}",
      rows.size(), kMinPowerKernelS * 1e3, streams.size(), kMinStreamPowerS * 1e3, list);
}

bool power_row(const MeasuredGemm& r) { return r.power_w && r.latency_s >= kMinPowerKernelS; }
bool power_row(const MeasuredStream& s) { return s.latency_s >= kMinStreamPowerS; }

// How scores name the streaming kernels' row.
constexpr const char* kStreamFormat = "decode attention";

KernelParameters fit_all(const std::vector<const MeasuredGemm*>& rows,
                         const std::vector<const MeasuredStream*>& streams,
                         const device::DeviceCatalog& catalog) {
  KernelParameters k;
  std::map<std::pair<std::string, std::string>, std::vector<const MeasuredGemm*>> groups;
  for (const MeasuredGemm* r : rows)
    groups[{r->engine, std::string(kernel::info(r->format).name)}].push_back(r);
  for (const auto& [key, members] : groups) {
    if (members.size() < kMinRows) continue;
    k.gemm[key.first][key.second] = fit_gemm(members, catalog);
  }
  std::vector<const MeasuredGemm*> powered;
  for (const MeasuredGemm* r : rows)
    if (power_row(*r)) powered.push_back(r);
  std::vector<const MeasuredStream*> streaming;
  for (const MeasuredStream* s : streams)
    if (power_row(*s)) streaming.push_back(s);
  fit_power(powered, streaming, catalog, k);
  return k;
}

struct Ratios {
  std::vector<double> time;
  std::vector<double> power;
};

void add_ratios(const std::vector<const MeasuredGemm*>& rows, const device::DeviceCatalog& catalog,
                const KernelParameters& parameters,
                std::map<std::tuple<std::string, std::string, std::string>, Ratios>& out) {
  for (const MeasuredGemm* r : rows) {
    const device::DeviceSpec& device = catalog.find(r->device_id);
    const std::string format(kernel::info(r->format).name);
    Ratios& ratios = out[{r->device_id, r->engine, format}];
    // Time as the tables measured it: short timing runs, not power-capped.
    const double t =
        kernel::gemm_time_s(device, r->shape, r->format, parameters.gemm_for(r->format, r->engine),
                            device.clock.boost_mhz);
    ratios.time.push_back(t / r->latency_s);
    if (power_row(*r) && parameters.power.measurements > 0) {
      const kernel::KernelEstimate e =
          kernel::predict_gemm(device, r->shape, r->format, parameters, r->engine);
      ratios.power.push_back(e.power_w / *r->power_w);
    }
  }
}

void add_ratios(const std::vector<const MeasuredStream*>& streams,
                const device::DeviceCatalog& catalog, const KernelParameters& parameters,
                std::map<std::tuple<std::string, std::string, std::string>, Ratios>& out) {
  if (parameters.power.measurements == 0) return;
  for (const MeasuredStream* s : streams) {
    if (!power_row(*s)) continue;
    out[{s->device_id, s->engine, kStreamFormat}].power.push_back(
        stream_power_w(*s, catalog, parameters.power) / s->power_w);
  }
}

std::vector<KernelScore> scores_of(
    const std::map<std::tuple<std::string, std::string, std::string>, Ratios>& ratios) {
  std::vector<KernelScore> out;
  for (const auto& [key, r] : ratios) {
    const auto& [device, engine, format] = key;
    if (!r.time.empty()) out.push_back(score_of(device, engine, format, "time", r.time));
    if (!r.power.empty()) out.push_back(score_of(device, engine, format, "power", r.power));
  }
  return out;
}

}  // namespace

GemmParameters decode_gemm_parameters(const VectorXd& x) {
  GemmParameters p;
  p.compute_efficiency = logistic(x[0]);
  p.memory_efficiency = logistic(x[1]);
  p.latency_s = std::exp(x[2]);
  p.k_half = std::exp(x[3]);
  p.tile_exponent = std::exp(x[4]);
  p.overlap_loss = logistic(x[5]);
  p.quantize_latency_s = std::exp(x[6]);
  return p;
}

VectorXd encode_gemm_parameters(const GemmParameters& p) {
  VectorXd x(kGemmParameterCount);
  x << logit(p.compute_efficiency), logit(p.memory_efficiency), std::log(p.latency_s),
      std::log(p.k_half), std::log(p.tile_exponent), logit(p.overlap_loss),
      std::log(p.quantize_latency_s);
  return x;
}

double stream_power_w(const MeasuredStream& s, const device::DeviceCatalog& catalog,
                      const kernel::PowerParameters& parameters) {
  const device::DeviceSpec& device = catalog.find(s.device_id);
  kernel::Activity a;
  a.compute = std::min(
      1.0, s.flop_count / s.latency_s /
               device.peak(kernel::units(device, kernel::GemmFormat::k16Bit)).value_or(INFINITY));
  a.memory = std::min(1.0, s.byte_count / s.latency_s / device.memory_bandwidth_byte_per_s);
  return kernel::measured_activity_power_w(device, parameters, a);
}

std::vector<KernelScore> score_kernels(const std::vector<MeasuredGemm>& rows,
                                       const std::vector<MeasuredStream>& streams,
                                       const device::DeviceCatalog& catalog,
                                       const KernelParameters& parameters) {
  std::vector<const MeasuredGemm*> all;
  for (const MeasuredGemm& r : rows) all.push_back(&r);
  std::vector<const MeasuredStream*> all_streams;
  for (const MeasuredStream& s : streams) all_streams.push_back(&s);
  std::map<std::tuple<std::string, std::string, std::string>, Ratios> ratios;
  add_ratios(all, catalog, parameters, ratios);
  add_ratios(all_streams, catalog, parameters, ratios);
  return scores_of(ratios);
}

KernelFit fit_kernels(const std::vector<MeasuredGemm>& rows,
                      const std::vector<MeasuredStream>& streams,
                      const device::DeviceCatalog& catalog, const ProgressCallback& progress) {
  KernelFit fit;
  std::vector<const MeasuredGemm*> all;
  std::vector<const MeasuredStream*> all_streams;
  std::set<std::string> gpus;
  for (const MeasuredGemm& r : rows) {
    all.push_back(&r);
    gpus.insert(r.device_id);
    if (power_row(r)) ++fit.power_rows;
  }
  for (const MeasuredStream& s : streams) {
    all_streams.push_back(&s);
    if (power_row(s)) ++fit.power_rows;
  }
  fit.rows = static_cast<int>(rows.size());
  const std::size_t steps = gpus.size() + 1;
  std::size_t done = 0;
  if (progress) progress(done, steps);
  std::map<std::tuple<std::string, std::string, std::string>, Ratios> held_out;
  for (const std::string& gpu : gpus) {
    std::vector<const MeasuredGemm*> train;
    std::vector<const MeasuredGemm*> test;
    for (const MeasuredGemm* r : all) (r->device_id == gpu ? test : train).push_back(r);
    std::vector<const MeasuredStream*> train_streams;
    std::vector<const MeasuredStream*> test_streams;
    for (const MeasuredStream* s : all_streams)
      (s->device_id == gpu ? test_streams : train_streams).push_back(s);
    const KernelParameters k = fit_all(train, train_streams, catalog);
    add_ratios(test, catalog, k, held_out);
    add_ratios(test_streams, catalog, k, held_out);
    if (progress) progress(++done, steps);
  }
  fit.out_of_sample = scores_of(held_out);
  fit.parameters = fit_all(all, all_streams, catalog);
  fit.in_sample = score_kernels(rows, streams, catalog, fit.parameters);
  if (progress) progress(++done, steps);

  KernelParameters& k = fit.parameters;
  for (const KernelScore& s : fit.out_of_sample)
    if (s.quantity == "time") k.time_log_sigma[s.format] = 0;
  for (auto& [format, sigma] : k.time_log_sigma)
    sigma = pooled_log_rms(fit.out_of_sample, "time", format);
  // The ± of a GEMM's power: the GEMMs' held-out errors (the streaming kernels have their own).
  std::vector<KernelScore> gemm_scores;
  for (const KernelScore& s : fit.out_of_sample)
    if (s.format != kStreamFormat) gemm_scores.push_back(s);
  k.power_log_sigma = pooled_log_rms(gemm_scores, "power", "");
  k.accuracy.time = accuracy_line(fit.out_of_sample, "time", "GEMM time");
  k.accuracy.power = accuracy_line(fit.out_of_sample, "power", "Kernel board power");
  // The engines' GEMMs (AIConfigurator's tables) and PyTorch's fp32 ones (NeuSight's), apart.
  std::set<std::string> engine_gpus;
  std::set<std::string> pytorch_gpus;
  std::size_t pytorch = 0;
  for (const MeasuredGemm& r : rows) {
    if (r.engine == kPytorchEngine) {
      ++pytorch;
      pytorch_gpus.insert(r.device_id);
    } else {
      engine_gpus.insert(r.device_id);
    }
  }
  const std::string fp32_source = pytorch > 0
                                      ? fmt::format(
                                            " and {} PyTorch fp32 GEMMs of {} GPUs from NeuSight's "
                                            "(sitar-lab/NeuSight, MIT)",
                                            pytorch, pytorch_gpus.size())
                                      : std::string();
  k.provenance = fmt::format(
      "fitted by nnergy calibrate --kernels on {} measured GEMMs of {} GPUs and {} kernels with "
      "sustained power (GEMMs and decode attention) from AIConfigurator's tables "
      "(ai-dynamo/aiconfigurator, Apache-2.0){}; data/calibration/kernels/README.md",
      rows.size() - pytorch, engine_gpus.size(), fit.power_rows, fp32_source);
  return fit;
}

}  // namespace nnergy::calibration
