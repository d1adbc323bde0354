#pragma once

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "nnergy/core/setting_name.h"
#include "nnergy/device/device_spec.h"
#include "nnergy/graph/network.h"
#include "nnergy/learn/model_file.h"
#include "nnergy/predict/op_predictor.h"

namespace nnergy::learn {

/// An OpPredictor backed by a trained model file: the node's description (graph::describe_op) is
/// encoded with the model's feature schema and given to the time regressor, and to the power
/// regressor when the model has one; energy = time × power (seed 000 §5.1). Without a power
/// model the power comes from the analytical model (archline at the learned time's operating
/// point), and name() says so. Uncertainties: the regressors' 1σ; σ_E² = (P·σ_t)² + (t·σ_P)²
/// (time and power errors taken as independent; σ_P = 0 for the analytical power, so σ_E is then
/// the time part only). An op whose type never occurred in the training rows (e.g. a Flatten view
/// outside the profiling whitelist) is predicted wholly by the analytical model: the trees could
/// only guess from unrelated ops, and a hybrid model cannot correct an analytical time of 0.
/// A batch of queries is one feature matrix and one regressor call per target. Thread-safe:
/// predict() is const and the regressors are read-only.
class LearnedPredictor : public predict::OpPredictor {
 public:
  /// Predicts for `device` (normally the model's own catalog device; another device relies on
  /// the device-descriptor features, seed 000 §7.2). `source` names the model file in outputs.
  LearnedPredictor(std::shared_ptr<const learn::ModelFile> model, device::DeviceSpec device,
                   std::string source);

  /// E.g. "forest (time) + analytical (power)" or "forest (time, power)".
  std::string name() const override;
  std::string description() const override;
  const device::DeviceSpec& device() const override { return device_; }
  std::vector<analytical::OpEstimate> predict(
      std::span<const predict::OpQuery> queries) const override;

  /// Which model made the time figures, e.g. "forest from cpu-forest.nnp".
  std::string time_source() const;
  /// Which model made the power figures, e.g. "analytical (the dataset has no power)".
  std::string power_source() const;

  /// Throws InvalidInput naming the model file and the setting (as `names` spells it) when
  /// `mode` or `precision` was not among the training rows (the model never saw such an op).
  void check_applicable(graph::Mode mode, device::Precision precision,
                        SettingNames names = SettingNames::kFlag) const;
  /// Notes on extrapolation for predicting `network` at `clocks_mhz` (MHz), one line each:
  /// another device than the model's, clocks the model never saw, op types it never saw (which
  /// the analytical model predicts).
  std::vector<std::string> caveats(const graph::Network& network,
                                   const std::vector<double>& clocks_mhz) const;
  /// True when ops of type `op_type` (e.g. "Conv") were among the training rows.
  bool knows_op_type(const std::string& op_type) const;

  const learn::ModelFile& model() const { return *model_; }

 private:
  std::shared_ptr<const learn::ModelFile> model_;
  device::DeviceSpec device_;
  std::string source_;
  std::set<std::string> known_op_types_;  ///< op types with a one-hot column in the schema
};

}  // namespace nnergy::learn
