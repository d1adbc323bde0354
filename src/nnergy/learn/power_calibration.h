#pragma once

// Fitting the power model's operand share κ (device::PowerActivity) to published average powers
// of whole networks, on top of the calibrated time model, and cross-validating it by leaving out
// one network at a time.

#include <string>
#include <utility>
#include <vector>

#include "nnergy/device/calibrated_parameters.h"
#include "nnergy/device/device_catalog.h"
#include "nnergy/learn/published_times.h"

namespace nnergy::learn {

/// A published average power with nnergy's predictions of it.
struct EvaluatedPower {
  PowerMeasurement measurement;
  double predicted_time_s = 0;  ///< predicted iteration time, s
  double archline_w = 0;        ///< predicted average power with κ = 0 (the archline alone), W
  double predicted_w = 0;       ///< predicted average power with the fitted κ, W
  double ratio() const { return predicted_w / measurement.measured_w; }  ///< predicted/measured
};

/// The fit on every measurement and its leave-one-network-out cross-validation.
struct PowerCalibration {
  device::PowerFit fit;  ///< operand_share, records, devices, power_log_sigma (out of sample)
  std::vector<EvaluatedPower> in_sample;
  /// Same order as in_sample, each with κ fitted on the other networks (none: κ = 0).
  std::vector<EvaluatedPower> leave_one_network_out;
  std::vector<std::pair<std::string, std::string>> failures;  ///< measurement id, reason
};

/// Fits κ in [0, 3] to `measurements` by least squares on predicted/measured − 1, each network
/// predicted with `catalog`'s device (already time-calibrated) and a host launch time of
/// `host_launch_s` per kernel. A measurement that cannot be predicted is in `failures`; with
/// none left, `fit.records` is 0.
PowerCalibration calibrate_power(const std::vector<PowerMeasurement>& measurements,
                                 const device::DeviceCatalog& catalog, double host_launch_s);

/// MAPE in percent of the powers `predicted` (&EvaluatedPower::archline_w or ::predicted_w)
/// against the measured ones. Throws InvalidInput for an empty list.
double power_mape_percent(const std::vector<EvaluatedPower>& evaluated,
                          double EvaluatedPower::*predicted);

}  // namespace nnergy::learn
