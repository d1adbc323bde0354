#pragma once

#include <span>
#include <string>
#include <vector>

#include "nnergy/analytical/pass_model.h"
#include "nnergy/device/device_spec.h"
#include "nnergy/device/operating_point.h"
#include "nnergy/graph/mode.h"
#include "nnergy/graph/network.h"
#include "nnergy/graph/op_cost.h"

namespace nnergy::predict {

/// One operation to predict: a node of a network with its cost, in a mode, at an operating point.
struct OpQuery {
  const graph::Network& network;
  const graph::Node& node;
  const graph::OpCost& cost;
  graph::Mode mode;
  device::OperatingPoint point;
};

/// Predicts the operations of networks on one device. Implementations are stateless after
/// construction and thread-safe.
class OpPredictor {
 public:
  virtual ~OpPredictor() = default;
  /// Short name shown in every output, e.g. "analytical".
  virtual std::string name() const = 0;
  /// One line on how the predictions are made and how far to trust them.
  virtual std::string description() const = 0;
  /// The device predicted for (its idle power, launch costs and datasheet).
  virtual const device::DeviceSpec& device() const = 0;
  /// Time, power and energy of one occurrence of each query's node, in the queries' order.
  /// network::predict_network asks once per network and operating point, so that a learned
  /// predictor gives its regressors every op at once.
  virtual std::vector<analytical::OpEstimate> predict(std::span<const OpQuery> queries) const = 0;
  /// One query: predict() of a batch of one.
  analytical::OpEstimate predict_one(const OpQuery& query) const;
  /// Relative 1σ of whole-network time shared by every op (a calibration's network-level
  /// error, e.g. 0.25 for ±25 %), added to the propagated per-op uncertainties; 0: none.
  virtual double network_relative_time_std() const { return 0; }
  /// Relative 1σ of whole-network average power shared by every op (independent of the time
  /// error), added to the energy's and EDP's uncertainty; 0: none.
  virtual double network_relative_power_std() const { return 0; }
};

}  // namespace nnergy::predict
