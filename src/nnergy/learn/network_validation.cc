#include "nnergy/learn/network_validation.h"

#include <map>
#include <tuple>

#include "nnergy/learn/evaluation.h"

namespace nnergy::learn {

std::optional<double> relative_difference(double value, double reference) {
  if (!(reference > 0)) return std::nullopt;
  return (value - reference) / reference;
}

std::vector<NetworkValidation> validate_networks(const dataset::DatasetStore& store) {
  using Key = std::tuple<std::int64_t, std::string, std::string, std::int64_t, std::string>;
  std::map<Key, const dataset::MeasurementRecord*> ops;
  const auto measurements = store.measurements();
  for (const dataset::MeasurementRecord& m : measurements) {
    if (m.values.status != dataset::MeasurementStatus::kOk || !m.values.time_s) continue;
    ops[{m.device_id, m.key.signature, m.key.mode, m.key.clock_mhz, m.key.dtype}] = &m;
  }
  const auto networks = store.networks();
  std::vector<NetworkValidation> rows;
  for (const dataset::NetworkMeasurementRecord& n : store.network_measurements()) {
    if (n.values.status != dataset::MeasurementStatus::kOk || !n.values.time_s) continue;
    const dataset::NetworkRecord* net = nullptr;
    for (const dataset::NetworkRecord& r : networks) {
      if (r.name == n.network_name && r.inputs_json == n.network_inputs_json) net = &r;
    }
    if (net == nullptr) continue;
    const auto measured = [&](const std::string& signature) -> const dataset::MeasuredValues* {
      const auto it = ops.find({n.device_id, signature, n.mode, n.clock_mhz, n.dtype});
      return it == ops.end() ? nullptr : &it->second->values;
    };
    // Σ count × value with sum_network: op times, then op energies (its `time_s` then holds
    // joules); an op with a time but no energy is missing from the second sum only.
    const NetworkSum time =
        sum_network(*net, [&](const std::string& signature) -> std::optional<regress::Prediction> {
          const dataset::MeasuredValues* m = measured(signature);
          if (m == nullptr) return std::nullopt;
          return regress::Prediction{*m->time_s, 0};
        });
    const NetworkSum energy =
        sum_network(*net, [&](const std::string& signature) -> std::optional<regress::Prediction> {
          const dataset::MeasuredValues* m = measured(signature);
          if (m == nullptr || !m->energy_j) return std::nullopt;
          return regress::Prediction{*m->energy_j, 0};
        });
    NetworkValidation v;
    v.network = n.network_name;
    v.mode = n.mode;
    v.dtype = n.dtype;
    v.clock_mhz = n.clock_mhz;
    v.measured_time_s = *n.values.time_s;
    v.measured_energy_j = n.values.energy_j;
    v.summed_time_s = time.time_s;
    v.unique_ops = static_cast<std::int64_t>(net->op_counts.size());
    v.ops_measured = static_cast<std::int64_t>(time.ops_summed);
    v.nodes_not_measured = time.nodes_missing;
    if (time.ops_summed > 0 && energy.ops_summed == time.ops_summed) {
      v.summed_energy_j = energy.time_s;
    }
    rows.push_back(std::move(v));
  }
  return rows;
}

}  // namespace nnergy::learn
