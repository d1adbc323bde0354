#pragma once

#include "nnergy/device/device_spec.h"
#include "nnergy/predict/op_predictor.h"

namespace nnergy::predict {

/// The analytical model (analytical/pass_model.h) as an OpPredictor: each operation from first
/// principles and the device's (calibrated) efficiencies, no measurements of the network.
class AnalyticalPredictor : public OpPredictor {
 public:
  /// Keeps a copy of `device`.
  explicit AnalyticalPredictor(device::DeviceSpec device);

  std::string name() const override { return "analytical"; }
  /// analytical::describe of the device.
  std::string description() const override;
  const device::DeviceSpec& device() const override { return device_; }
  /// analytical::predict_op of each query.
  std::vector<analytical::OpEstimate> predict(std::span<const OpQuery> queries) const override;
  /// e^σ − 1 of the device's calibration (device::CalibrationInfo::time_log_sigma).
  double network_relative_time_std() const override;
  /// e^σ − 1 of the device's power calibration (device::PowerActivity::power_log_sigma).
  double network_relative_power_std() const override;

 private:
  device::DeviceSpec device_;
};

}  // namespace nnergy::predict
