#pragma once

// Fitting the power model's operand share κ (device::PowerActivity) to published average powers
// of whole networks, on top of the calibrated time model, and cross-validating it by leaving out
// one network at a time; and scoring the calibrated model's average powers and energies per
// iteration against measured ones (`nnergy evaluate --published`).

#include <string>
#include <utility>
#include <vector>

#include "nnergy/calibration/published_times.h"
#include "nnergy/core/progress.h"
#include "nnergy/device/calibrated_parameters.h"
#include "nnergy/device/device_catalog.h"
#include "nnergy/network/network_prediction.h"

namespace nnergy::calibration {

/// A published average power with nnergy's predictions of it.
struct EvaluatedPower {
  PowerMeasurement measurement;
  double predicted_time_s = 0;  ///< predicted iteration time, s
  double archline_w = 0;        ///< predicted average power with κ = 0 (the archline alone), W
  double predicted_w = 0;       ///< predicted average power with the fitted κ, W
  double ratio() const { return predicted_w / measurement.measured_w; }  ///< predicted/measured
};

/// A published energy per iteration with nnergy's predictions of it.
struct EvaluatedEnergy {
  EnergyMeasurement measurement;
  double predicted_time_s = 0;  ///< predicted iteration time, s
  double predicted_w = 0;       ///< predicted average power, W
  double predicted_j = 0;       ///< predicted energy per iteration (time × average power), J
  double ratio() const { return predicted_j / measurement.measured_j; }  ///< predicted/measured
};

/// Predicted totals of one iteration of the run `run` measured (its mode, precision, batch and,
/// in training, the optimizer step) on `device` at its boost clock, with the device's power
/// model (archline plus operand share κ of device.power_activity) and the host launch time of
/// `host` for its mode: time_s (s), power_w (average, W) and energy_j (J) among others.
/// `network` is run.model imported with run.bindings at run.precision's storage type
/// (network::NetworkCache). The one prediction of a run's power, for calibration and
/// evaluation alike.
network::NetworkTotals predict_run(const network::CostedNetwork& network,
                                   const network::NetworkTimeMeasurement& run,
                                   const device::DeviceSpec& device,
                                   const network::TimeEvaluationSettings& host);

/// Measured average powers and energies per iteration against nnergy's predictions of them.
struct PowerEvaluation {
  /// archline_w: κ = 0; predicted_w: with the catalog device's κ (the calibrated one).
  std::vector<EvaluatedPower> powers;
  std::vector<EvaluatedEnergy> energies;
  std::vector<std::pair<std::string, std::string>> failures;  ///< measurement id, reason
};

/// Predicts every measurement with predict_run on `catalog`'s device (each network imported
/// once per model, bindings and precision). A measurement that cannot be predicted (an unknown
/// device, no peak for its precision, a model that fails to import, a measured value that is
/// not positive) is in `failures` with the reason, never dropped silently. `progress`, when
/// given, is told the measurements done (powers, then energies) of all; `cache` as in
/// network::prepare_times.
PowerEvaluation evaluate_powers(const std::vector<PowerMeasurement>& powers,
                                const std::vector<EnergyMeasurement>& energies,
                                const device::DeviceCatalog& catalog,
                                const network::TimeEvaluationSettings& host,
                                const ProgressCallback& progress = {},
                                network::NetworkCache* cache = nullptr);

/// The fit on every measurement and its leave-one-network-out cross-validation.
struct PowerCalibration {
  device::PowerFit fit;  ///< operand_share, records, devices, power_log_sigma (out of sample)
  std::vector<EvaluatedPower> in_sample;
  /// Same order as in_sample, each with κ and its precision's flop power fitted on the other
  /// networks (none: κ = 0, ratio 1). A tensor-precision run is predicted with the κ of all
  /// fp32 runs, its own network's included (κ is fitted first; the tensor ratios on top).
  std::vector<EvaluatedPower> leave_one_network_out;
  std::vector<std::pair<std::string, std::string>> failures;  ///< measurement id, reason
};

/// Fits κ in [0, 3] on the runs whose matrix products use the fp32 units, then, with that κ,
/// each tensor precision's flop power (PowerActivity::tensor_flop_power, 0.25–4; a precision with
/// fewer than 10 runs keeps 1), by least squares on predicted/measured − 1, each network
/// predicted with `catalog`'s device (already time-calibrated) and the host launch times of
/// `host`. Each run is predicted once per point of a grid of each parameter (κ step 0.1, ratio
/// step 0.125) and the fits interpolate. A measurement that cannot be predicted is in
/// `failures`; with none left, `fit.records` is 0.
PowerCalibration calibrate_power(const std::vector<PowerMeasurement>& measurements,
                                 const device::DeviceCatalog& catalog,
                                 const network::TimeEvaluationSettings& host);

/// MAPE in percent of the powers `predicted` (&EvaluatedPower::archline_w or ::predicted_w)
/// against the measured ones. Throws InvalidInput for an empty list.
double power_mape_percent(const std::vector<EvaluatedPower>& evaluated,
                          double EvaluatedPower::*predicted);

}  // namespace nnergy::calibration
