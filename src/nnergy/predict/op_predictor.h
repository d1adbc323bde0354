#pragma once

#include <string>

#include "nnergy/device/precision.h"
#include "nnergy/graph/network.h"
#include "nnergy/graph/op_cost.h"

namespace nnergy::predict {

/// Inference (forward, eval mode) or one training step (forward + backward, train mode).
enum class Mode { kInference, kTraining };

/// "inference", "training".
std::string to_string(Mode mode);
/// Parses "inference" (or "infer") and "training" (or "train"), in any ASCII case. Throws
/// InvalidInput naming `flag` otherwise, with the accepted names and, for a near miss,
/// "did you mean".
Mode parse_mode(const std::string& name, const std::string& flag);

/// Element type tensors are stored in at `precision` (tf32 computes on fp32 storage).
graph::DataType storage_type(device::Precision precision);

/// Where on the device an operation runs.
struct OperatingPoint {
  device::Precision precision = device::Precision::kFp32;
  double clock_mhz = 0;  ///< core clock, MHz
};

/// One operation to predict: a node of a network with its cost.
struct OpQuery {
  const graph::Network& network;
  const graph::Node& node;
  const graph::OpCost& cost;
  Mode mode;
  OperatingPoint point;
};

/// Predicted time, power and energy of one occurrence of an operation.
struct OpEstimate {
  double time_s = 0;
  double energy_j = 0;
  double power_w = 0;          ///< energy_j / time_s (0 when time_s is 0)
  double forward_time_s = 0;   ///< part of time_s spent in the forward pass
  bool compute_bound = false;  ///< the compute term of the roofline dominated (largest pass)
  bool power_capped = false;   ///< the estimate hit the device's power limit
  /// 1σ uncertainties as the predictor estimates them, same units; 0 = unknown (the analytical
  /// model gives none).
  double time_std_s = 0;
  double power_std_w = 0;
  double energy_std_j = 0;
};

/// Predicts operations. Implementations are stateless after construction and thread-safe.
class OpPredictor {
 public:
  virtual ~OpPredictor() = default;
  /// Short name shown in every output, e.g. "analytical".
  virtual std::string name() const = 0;
  /// One line on how the predictions are made and how far to trust them.
  virtual std::string description() const = 0;
  /// Time, power and energy of one occurrence of `query.node` in `query.mode`.
  virtual OpEstimate predict(const OpQuery& query) const = 0;
  /// Relative 1σ of whole-network time shared by every op (a calibration's network-level
  /// error, e.g. 0.25 for ±25 %), added to the propagated per-op uncertainties; 0: none.
  virtual double network_relative_time_std() const { return 0; }
  /// Relative 1σ of whole-network average power shared by every op (independent of the time
  /// error), added to the energy's and EDP's uncertainty; 0: none.
  virtual double network_relative_power_std() const { return 0; }
};

}  // namespace nnergy::predict
