#include "nnergy/predict/analytical_predictor.h"

namespace nnergy::predict {

AnalyticalPredictor::AnalyticalPredictor(device::DeviceSpec device) : device_(std::move(device)) {}

std::string AnalyticalPredictor::description() const { return analytical::describe(device_); }

std::vector<analytical::OpEstimate> AnalyticalPredictor::predict(
    std::span<const OpQuery> queries) const {
  std::vector<analytical::OpEstimate> out;
  out.reserve(queries.size());
  for (const OpQuery& q : queries)
    out.push_back(analytical::predict_op(device_, q.cost, q.mode, q.point));
  return out;
}

double AnalyticalPredictor::network_relative_time_std() const {
  return device_.calibration.relative_time_std();
}

double AnalyticalPredictor::network_relative_power_std() const {
  return device::relative_spread(device_.power_activity.power_log_sigma);
}

}  // namespace nnergy::predict
