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

// Predicted (time s, average power W) of `run` with operand share `kappa`.
std::pair<double, double> predict_power(const PowerRun& run, double kappa,
                                        const network::TimeEvaluationSettings& host) {
  device::DeviceSpec device = run.device;
  device.power_activity.operand_share = kappa;
  const network::NetworkTotals t = predict_run(*run.costed, run.measurement.run, device, host);
  return {t.time_s, t.power_w};
}

// Largest κ searched: the operand power would then exceed the memory power at full bandwidth
// three times over, far beyond what a kernel moves through its caches.
constexpr double kMaxKappa = 3;

// κ in [0, kMaxKappa] minimising Σ (P_i(κ)/P_meas,i − 1)² over `use`. Each P_i rises with κ
// until the op powers reach the TDP cap, so the sum is searched by golden section rather than
// solved as if it were linear.
double fit_kappa(const std::vector<PowerRun>& runs, const std::vector<std::size_t>& use,
                 const network::TimeEvaluationSettings& host) {
  if (use.empty()) return 0;
  auto cost = [&](double kappa) {
    double sum = 0;
    for (std::size_t i : use) {
      const double r = predict_power(runs[i], kappa, host).second / runs[i].measurement.measured_w;
      sum += (r - 1) * (r - 1);
    }
    return sum;
  };
  const double golden = (std::sqrt(5.0) - 1) / 2;
  double lo = 0;
  double hi = kMaxKappa;
  double a = hi - golden * (hi - lo);
  double b = lo + golden * (hi - lo);
  double fa = cost(a);
  double fb = cost(b);
  while (hi - lo > 1e-9) {
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
  const double kappa = (lo + hi) / 2;
  return cost(0) <= cost(kappa) ? 0.0 : kappa;
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
  std::vector<std::size_t> all(n);
  for (std::size_t i = 0; i < n; ++i) all[i] = i;
  // The archline alone (κ = 0), once per run: the baseline every κ is compared with.
  std::vector<std::pair<double, double>> archline(n);
  for (std::size_t i = 0; i < n; ++i) archline[i] = predict_power(runs[i], 0, host);
  auto evaluate = [&](std::size_t i, double kappa) {
    return EvaluatedPower{runs[i].measurement, archline[i].first, archline[i].second,
                          predict_power(runs[i], kappa, host).second};
  };
  const double kappa = fit_kappa(runs, all, host);
  std::set<std::string> devices;
  for (std::size_t i = 0; i < n; ++i) {
    result.in_sample.push_back(evaluate(i, kappa));
    devices.insert(runs[i].measurement.run.device_id);
    // Leave out every measurement of this one's network (none left: κ = 0).
    std::vector<std::size_t> others;
    for (std::size_t j = 0; j < n; ++j) {
      if (runs[j].measurement.run.network != runs[i].measurement.run.network) others.push_back(j);
    }
    result.leave_one_network_out.push_back(evaluate(i, fit_kappa(runs, others, host)));
  }
  result.fit.operand_share = kappa;
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
