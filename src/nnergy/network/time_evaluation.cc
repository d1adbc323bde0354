#include "nnergy/network/time_evaluation.h"

#include <fmt/format.h>

#include <algorithm>
#include <memory>

#include "nnergy/core/error.h"
#include "nnergy/network/network_prediction.h"
#include "nnergy/predict/analytical_predictor.h"

namespace nnergy::network {

namespace {

// Imported networks, each once per model, bindings and storage type.
class NetworkCache {
 public:
  const CostedNetwork& get(const NetworkTimeMeasurement& m) {
    std::string key = m.model.string() + "|" + std::to_string(m.bindings.batch.value_or(0)) + "|" +
                      std::string(device::to_string(m.precision));
    for (const auto& [name, value] : m.bindings.named)
      key += "|" + name + "=" + std::to_string(value);
    auto it = entries_.find(key);
    if (it == entries_.end()) {
      auto entry = std::make_unique<Entry>();
      entry->network = graph::import_onnx(m.model, m.bindings);
      entry->network.cast_floating_tensors(predict::storage_type(m.precision));
      entry->costed = std::make_unique<CostedNetwork>(entry->network);
      it = entries_.emplace(key, std::move(entry)).first;
    }
    return *it->second->costed;
  }

 private:
  struct Entry {
    graph::Network network;
    std::unique_ptr<CostedNetwork> costed;  // refers to `network`, so the entry never moves
  };
  std::map<std::string, std::unique_ptr<Entry>> entries_;
};

// The predicted time of the part of the iteration `m` timed.
double predicted_part_s(const NetworkPrediction& p, const NetworkTimeMeasurement& m) {
  double forward_s = 0;
  double backward_s = 0;
  double optimizer_s = 0;
  for (const LayerPrediction& layer : p.layers) {
    if (layer.node_index) {
      forward_s += layer.forward_time_s;
      backward_s += layer.time_s - layer.forward_time_s;
    } else if (layer.op_type != kHostWaitOp) {
      optimizer_s += layer.time_s;
    }
  }
  switch (m.part) {
    case TimedPart::kForward:
      return forward_s;
    case TimedPart::kBackward:
      return backward_s;
    case TimedPart::kIteration:
      break;
  }
  return p.totals.time_s - (m.optimizer_step ? 0.0 : optimizer_s);
}

}  // namespace

TimeEvaluation evaluate_times(const std::vector<NetworkTimeMeasurement>& measurements,
                              const device::DeviceCatalog& catalog,
                              const TimeEvaluationSettings& settings) {
  TimeEvaluation result;
  NetworkCache cache;
  for (const NetworkTimeMeasurement& m : measurements) {
    try {
      const device::DeviceSpec& device = catalog.find(m.device_id);
      if (!device.peak(m.precision)) {
        throw InvalidInput(fmt::format("{} has no {} peak in the catalog", device.id,
                                       device::to_string(m.precision)));
      }
      if (!(m.measured_s > 0)) throw InvalidInput("the measured time is not positive");
      const CostedNetwork& costed = cache.get(m);
      PredictionSettings s;
      s.mode = m.mode;
      s.batch = costed.network().batch;
      s.point = {m.precision, device.clock.boost_mhz};
      s.host_launch_s = settings.host_launch_s;
      const predict::AnalyticalPredictor analytical(device);
      const NetworkPrediction p = predict_network(costed, analytical, analytical, s);
      result.evaluated.push_back({m, predicted_part_s(p, m)});
    } catch (const InvalidInput& e) {
      result.failures.emplace_back(m, e.what());
    }
  }
  return result;
}

}  // namespace nnergy::network
