#include "nnergy/calibration/power_calibration.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>

#include "nnergy/core/error.h"
#include "nnergy/core/statistics.h"
#include "nnergy/network/network_prediction.h"
#include "nnergy/network/time_evaluation.h"
#include "nnergy/predict/analytical_predictor.h"

namespace nnergy::calibration {

namespace {

// One measurement's network, ready to predict at any κ.
struct PowerRun {
  PowerMeasurement measurement;
  const network::CostedNetwork* costed = nullptr;  // owned by the calibration's NetworkCache
  device::DeviceSpec device;
};

// Predicted (time s, average power W) of `run` with operand share `kappa` and the matrix units'
// flop power `tensor` (PowerActivity::tensor_flop_power; empty: uncalibrated).
std::pair<double, double> predict_power(const PowerRun& run, double kappa,
                                        const std::map<device::Precision, double>& tensor,
                                        const network::TimeEvaluationSettings& host) {
  device::DeviceSpec device = run.device;
  device.power_activity.operand_share = kappa;
  device.power_activity.tensor_flop_power = tensor;
  const network::NetworkTotals t = predict_run(*run.costed, run.measurement.run, device, host);
  return {t.time_s, t.power_w};
}

// A parameter's grid: predicted powers of each run at lo, lo + step, ..., hi, computed once so
// that every fit (in sample and each cross-validation fold) interpolates instead of predicting
// the networks again.
struct Grid {
  double lo = 0;
  double hi = 0;
  double step = 0;
  std::size_t points() const { return static_cast<std::size_t>(std::lround((hi - lo) / step)) + 1; }
  double at(std::size_t k) const { return lo + step * static_cast<double>(k); }
  // Linear interpolation of `curve` (one value per grid point) at x in [lo, hi].
  double interpolate(const std::vector<double>& curve, double x) const {
    const double position = std::clamp((x - lo) / step, 0.0, static_cast<double>(points() - 1));
    const auto k = std::min(static_cast<std::size_t>(position), points() - 2);
    const double f = position - static_cast<double>(k);
    return curve[k] * (1 - f) + curve[k + 1] * f;
  }
};

// κ from 0 to 3: at 3 the operand power would exceed the memory power at full bandwidth three
// times over, far beyond what a kernel moves through its caches.
constexpr Grid kKappaGrid{0, 3, 0.1};
// The matrix units' flop power at a tensor precision's peak, as a multiple of the fp32 units'
// at the fp32 peak (PowerActivity::tensor_flop_power).
constexpr Grid kTensorGrid{0.25, 4, 0.125};
// Fewer average powers at a tensor precision: its flop power is not fitted (stays 1).
constexpr std::size_t kMinTensorPowerRecords = 10;

// The minimum of `cost` on [lo, hi] by golden section: each run's power rises with the parameter
// until the op powers reach the TDP cap, so the sum of squares is searched rather than solved
// as if it were linear.
template <typename Cost>
double golden_minimum(const Cost& cost, double lo, double hi) {
  const double golden = (std::sqrt(5.0) - 1) / 2;
  double a = hi - golden * (hi - lo);
  double b = lo + golden * (hi - lo);
  double fa = cost(a);
  double fb = cost(b);
  while (hi - lo > 1e-6) {
    if (fa <= fb) {
      hi = b;
      b = a;
      fb = fa;
      a = hi - golden * (hi - lo);
      fa = cost(a);
    } else {
      lo = a;
      a = b;
      fa = fb;
      b = lo + golden * (hi - lo);
      fb = cost(b);
    }
  }
  return (lo + hi) / 2;
}

// The value on `grid` minimising Σ (P_i(x)/P_meas,i − 1)² over `use`, P_i interpolated on each
// run's curve; `none` (the parameter's neutral value) when it does better or `use` is empty.
double fit_on_grid(const std::vector<PowerRun>& runs,
                   const std::vector<std::vector<double>>& curves,
                   const std::vector<std::size_t>& use, const Grid& grid, double none) {
  if (use.empty()) return none;
  auto cost = [&](double x) {
    double sum = 0;
    for (std::size_t i : use) {
      const double r = grid.interpolate(curves[i], x) / runs[i].measurement.measured_w;
      sum += (r - 1) * (r - 1);
    }
    return sum;
  };
  const double x = golden_minimum(cost, grid.lo, grid.hi);
  return cost(none) <= cost(x) ? none : x;
}

// Whether `run` computes its matrix products on matrix units at a precision of their own (tf32,
// fp16, bf16, fp8), whose flop power is fitted apart from the fp32 units'.
bool on_tensor_units(const PowerRun& run) {
  const device::Precision p = run.measurement.run.precision;
  return p != device::Precision::kFp32 && p != device::Precision::kFp64 &&
         run.device.peak(p).has_value();
}

}  // namespace

network::NetworkTotals predict_run(const network::CostedNetwork& network,
                                   const network::NetworkTimeMeasurement& run,
                                   const device::DeviceSpec& device,
                                   const network::TimeEvaluationSettings& host) {
  const predict::AnalyticalPredictor analytical(device);
  network::PredictionSettings settings;
  settings.mode = run.mode;
  settings.point = {run.precision, device.clock.boost_mhz};
  settings.batch = run.bindings.batch.value_or(1);
  settings.host_launch_s = host.host_launch_for(run.mode);
  return network::predict_network(network, analytical, settings).totals;
}

PowerEvaluation evaluate_powers(const std::vector<PowerMeasurement>& powers,
                                const std::vector<EnergyMeasurement>& energies,
                                const device::DeviceCatalog& catalog,
                                const network::TimeEvaluationSettings& host,
                                const ProgressCallback& progress, network::NetworkCache* cache) {
  PowerEvaluation result;
  network::NetworkCache own_cache;
  network::NetworkCache& networks = cache ? *cache : own_cache;
  // A run's power and energy records share one prediction (per network, device, mode and κ).
  std::map<std::tuple<const network::CostedNetwork*, std::string, graph::Mode, bool>,
           network::NetworkTotals>
      predicted;
  const std::size_t total = powers.size() + energies.size();
  std::size_t done = 0;
  if (progress) progress(0, total);
  // Predicts `run` (with κ = 0 too when asked), or names it in the failures.
  auto predict =
      [&](const network::NetworkTimeMeasurement& run, double measured, const char* what,
          bool archline_too) -> std::optional<std::pair<network::NetworkTotals, double>> {
    std::optional<std::pair<network::NetworkTotals, double>> out;
    try {
      if (!(measured > 0)) throw InvalidInput(fmt::format("the measured {} is not positive", what));
      const device::DeviceSpec& device = network::measured_device(run, catalog);
      const network::CostedNetwork& costed = networks.get(run);
      auto totals = [&](bool archline) -> const network::NetworkTotals& {
        const auto key = std::make_tuple(&costed, device.id, run.mode, archline);
        auto it = predicted.find(key);
        if (it == predicted.end()) {
          device::DeviceSpec d = device;
          if (archline) d.power_activity.operand_share = 0;
          it = predicted.emplace(key, predict_run(costed, run, d, host)).first;
        }
        return it->second;
      };
      out.emplace(totals(false), archline_too ? totals(true).power_w : 0.0);
    } catch (const InvalidInput& e) {
      result.failures.emplace_back(run.id, e.what());
    }
    if (progress) progress(++done, total);
    return out;
  };
  for (const PowerMeasurement& m : powers) {
    if (const auto p = predict(m.run, m.measured_w, "power", true)) {
      result.powers.push_back({m, p->first.time_s, p->second, p->first.power_w});
    }
  }
  for (const EnergyMeasurement& m : energies) {
    if (const auto p = predict(m.run, m.measured_j, "energy", false)) {
      result.energies.push_back({m, p->first.time_s, p->first.power_w, p->first.energy_j});
    }
  }
  return result;
}

double power_mape_percent(const std::vector<EvaluatedPower>& evaluated,
                          double EvaluatedPower::*predicted) {
  std::vector<double> measured_w;
  std::vector<double> predicted_w;
  for (const EvaluatedPower& e : evaluated) {
    measured_w.push_back(e.measurement.measured_w);
    predicted_w.push_back(e.*predicted);
  }
  return statistics::mape_percent(measured_w, predicted_w);
}

PowerCalibration calibrate_power(const std::vector<PowerMeasurement>& measurements,
                                 const device::DeviceCatalog& catalog,
                                 const network::TimeEvaluationSettings& host) {
  PowerCalibration result;
  network::NetworkCache cache;
  std::vector<PowerRun> runs;
  for (const PowerMeasurement& m : measurements) {
    try {
      if (!(m.measured_w > 0)) throw InvalidInput("the measured power is not positive");
      const device::DeviceSpec& device = network::measured_device(m.run, catalog);
      runs.push_back({m, &cache.get(m.run), device});
    } catch (const InvalidInput& e) {
      result.failures.emplace_back(m.run.id, e.what());
    }
  }
  if (runs.empty()) return result;
  const std::size_t n = runs.size();
  const std::map<device::Precision, double> uncalibrated;
  // κ on the runs whose matrix products use the fp32 units (all runs when there are none), then
  // each tensor precision's flop power on its runs with that κ.
  std::vector<std::size_t> scalar;
  std::map<device::Precision, std::vector<std::size_t>> tensor;
  for (std::size_t i = 0; i < n; ++i) {
    if (on_tensor_units(runs[i]))
      tensor[runs[i].measurement.run.precision].push_back(i);
    else
      scalar.push_back(i);
  }
  if (scalar.empty()) {
    for (std::size_t i = 0; i < n; ++i) scalar.push_back(i);
    tensor.clear();
  }
  std::erase_if(tensor, [](const auto& p) { return p.second.size() < kMinTensorPowerRecords; });
  std::vector<bool> is_scalar(n, false);
  for (std::size_t i : scalar) is_scalar[i] = true;

  // The archline alone (κ = 0, uncalibrated matrix units), once per run: the baseline.
  std::vector<std::pair<double, double>> archline(n);
  for (std::size_t i = 0; i < n; ++i) archline[i] = predict_power(runs[i], 0, uncalibrated, host);
  std::vector<std::vector<double>> kappa_curves(n);
  for (std::size_t i : scalar) {
    for (std::size_t k = 0; k < kKappaGrid.points(); ++k)
      kappa_curves[i].push_back(
          k == 0 ? archline[i].second
                 : predict_power(runs[i], kKappaGrid.at(k), uncalibrated, host).second);
  }
  const double kappa = fit_on_grid(runs, kappa_curves, scalar, kKappaGrid, 0);
  std::vector<std::vector<double>> tensor_curves(n);
  std::map<device::Precision, double> ratios;
  for (const auto& [precision, use] : tensor) {
    for (std::size_t i : use) {
      for (std::size_t k = 0; k < kTensorGrid.points(); ++k)
        tensor_curves[i].push_back(
            predict_power(runs[i], kappa, {{precision, kTensorGrid.at(k)}}, host).second);
    }
    ratios[precision] = fit_on_grid(runs, tensor_curves, use, kTensorGrid, 1);
  }

  std::set<std::string> devices;
  std::set<std::string> networks;
  for (const PowerRun& run : runs) {
    devices.insert(run.measurement.run.device_id);
    networks.insert(run.measurement.run.network);
  }
  result.in_sample.resize(n);
  result.leave_one_network_out.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    const auto [time_s, power_w] = predict_power(runs[i], kappa, ratios, host);
    result.in_sample[i] = {runs[i].measurement, time_s, archline[i].second, power_w};
  }
  // Leave out every measurement of one network at a time (none left: κ = 0, ratio 1).
  for (const std::string& network : networks) {
    auto others = [&](const std::vector<std::size_t>& use) {
      std::vector<std::size_t> kept;
      for (std::size_t j : use)
        if (runs[j].measurement.run.network != network) kept.push_back(j);
      return kept;
    };
    const double fold_kappa = fit_on_grid(runs, kappa_curves, others(scalar), kKappaGrid, 0);
    std::map<device::Precision, double> fold_ratios;
    for (const auto& [precision, use] : tensor)
      fold_ratios[precision] = fit_on_grid(runs, tensor_curves, others(use), kTensorGrid, 1);
    for (std::size_t i = 0; i < n; ++i) {
      if (runs[i].measurement.run.network != network) continue;
      double held_out_w = 0;
      if (is_scalar[i]) {
        held_out_w = kKappaGrid.interpolate(kappa_curves[i], fold_kappa);
      } else if (auto t = fold_ratios.find(runs[i].measurement.run.precision);
                 t != fold_ratios.end()) {
        held_out_w = kTensorGrid.interpolate(tensor_curves[i], t->second);
      } else {
        held_out_w = predict_power(runs[i], fold_kappa, uncalibrated, host).second;
      }
      result.leave_one_network_out[i] = {runs[i].measurement, archline[i].first, archline[i].second,
                                         held_out_w};
    }
  }
  result.fit.operand_share = kappa;
  for (const auto& [precision, ratio] : ratios)
    result.fit.tensor_flop_power[std::string(device::to_string(precision))] = ratio;
  result.fit.records = n;
  result.fit.devices.assign(devices.begin(), devices.end());
  // 1σ of ln(measured/predicted): the rms error of the logarithms.
  std::vector<double> log_measured;
  std::vector<double> log_predicted;
  for (const EvaluatedPower& e : result.leave_one_network_out) {
    log_measured.push_back(std::log(e.measurement.measured_w));
    log_predicted.push_back(std::log(e.predicted_w));
  }
  result.fit.power_log_sigma = statistics::rmse(log_measured, log_predicted);
  return result;
}

}  // namespace nnergy::calibration
