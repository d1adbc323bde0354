#include "nnergy/network/time_evaluation.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <memory>
#include <set>

#include "nnergy/core/error.h"
#include "nnergy/network/network_prediction.h"

namespace nnergy::network {

const CostedNetwork& NetworkCache::get(const NetworkTimeMeasurement& m) {
  std::string key = m.model.string() + "|" + std::to_string(m.bindings.batch.value_or(0)) + "|" +
                    std::string(device::to_string(m.precision));
  for (const auto& [name, value] : m.bindings.named)
    key += "|" + name + "=" + std::to_string(value);
  auto it = entries_.find(key);
  if (it == entries_.end()) {
    auto entry = std::make_unique<Entry>();
    entry->network = graph::import_onnx(m.model, m.bindings);
    entry->network.cast_floating_tensors(device::storage_type(m.precision));
    entry->costed = std::make_unique<CostedNetwork>(entry->network);
    it = entries_.emplace(key, std::move(entry)).first;
  }
  return *it->second->costed;
}

const device::DeviceSpec& measured_device(const NetworkTimeMeasurement& m,
                                          const device::DeviceCatalog& catalog) {
  const device::DeviceSpec& device = catalog.find(m.device_id);
  if (!device.peak(m.precision)) {
    throw InvalidInput(
        fmt::format("{} has no {} peak in the catalog", device.id, device::to_string(m.precision)));
  }
  return device;
}

std::string_view to_string(TimedPart part) {
  switch (part) {
    case TimedPart::kForward:
      return "forward";
    case TimedPart::kBackward:
      return "backward";
    case TimedPart::kIteration:
      break;
  }
  return "iteration";
}

TimedNetwork::TimedNetwork(const CostedNetwork& costed, const NetworkTimeMeasurement& m)
    : part_(m.part), precision_(m.precision), input_copied_(m.input_copied) {
  const graph::Network& network = costed.network();
  for (std::size_t t : network.data_inputs()) input_bytes_ += network.tensor(t).bytes();
  const bool training = m.mode == graph::Mode::kTraining;
  std::set<std::string> measured(m.nodes.begin(), m.nodes.end());
  nodes_only_ = !measured.empty();
  for (const graph::Node& node : network.nodes()) measured.erase(node.name);
  if (!measured.empty()) {
    throw InvalidInput(fmt::format("{}: no node named '{}' (the measured ops)", m.model.string(),
                                   *measured.begin()));
  }
  // Unique operation → index of its forward and backward pass in passes_.
  std::vector<std::optional<std::pair<std::size_t, std::size_t>>> index(costed.unique_count());
  for (std::size_t n = 0; n < network.nodes().size(); ++n) {
    const graph::OpCost& cost = costed.costs()[n];
    if (cost.op_class == graph::OpClass::kShape) continue;
    if (nodes_only_ &&
        std::find(m.nodes.begin(), m.nodes.end(), network.nodes()[n].name) == m.nodes.end()) {
      continue;
    }
    auto& slot = index[costed.unique_of_node()[n]];
    if (!slot) {
      slot = std::make_pair(passes_.size(), passes_.size() + 1);
      // A library without Winograd in a pass runs its 3×3 convolutions as plain GEMMs.
      auto traits = [&](bool backward) {
        analytical::PassTraits t = analytical::PassTraits::of(cost, m.mode, backward);
        const bool winograd = m.winograd == WinogradPasses::kAll ||
                              (m.winograd == WinogradPasses::kForward && !backward);
        if (t.kind == graph::MatrixKind::kConv3x3 && !winograd) t.kind = graph::MatrixKind::kGemm;
        return t;
      };
      passes_.push_back(
          {training ? cost.training_forward : cost.inference, cost.op_class, traits(false)});
      passes_.push_back(
          {training ? cost.backward : graph::PassCost{}, cost.op_class, traits(true)});
    }
    forward_runs_.push_back(slot->first);
    if (training) backward_runs_.push_back(slot->second);
  }
  std::reverse(backward_runs_.begin(), backward_runs_.end());
  if (training && m.optimizer_step && network.parameter_count() > 0) {
    passes_.push_back({optimizer_step(network, graph::Optimizer::kSgdMomentum),
                       graph::OpClass::kElementwise,
                       {}});
    optimizer_run_ = passes_.size() - 1;
  }
}

double TimedNetwork::predict_s(const device::DeviceSpec& device, double host_launch_s,
                               double input_copy_bytes_per_s) const {
  const device::OperatingPoint point{precision_, device.clock.boost_mhz};
  std::vector<double> time_s(passes_.size());
  for (std::size_t i = 0; i < passes_.size(); ++i) {
    const Pass& p = passes_[i];
    time_s[i] = analytical::predict_pass(device, p.cost, p.op_class, point, p.traits).time_s;
  }
  // A part timed on its own starts with an idle host and GPU, like the whole iteration.
  std::vector<KernelRun> runs;
  runs.reserve(forward_runs_.size() + backward_runs_.size() + 1);
  auto add = [&](std::size_t r) { runs.push_back({passes_[r].cost.kernel_count, time_s[r]}); };
  if (part_ != TimedPart::kBackward) {
    for (std::size_t r : forward_runs_) add(r);
  }
  if (part_ != TimedPart::kForward) {
    for (std::size_t r : backward_runs_) add(r);
  }
  if (part_ == TimedPart::kIteration && optimizer_run_) add(*optimizer_run_);
  // A pageable copy returns to the host when the data is on the GPU: nothing overlaps it.
  const double copy_s =
      input_copied_ && !nodes_only_ && part_ != TimedPart::kBackward && input_copy_bytes_per_s > 0
          ? input_bytes_ / input_copy_bytes_per_s
          : 0.0;
  return copy_s + critical_path_s(runs, nodes_only_ ? 0.0 : host_launch_s);
}

TimeEvaluationSettings host_settings(std::optional<double> host_launch_us,
                                     const device::CalibratedParameters* calibration) {
  TimeEvaluationSettings s;
  s.host_launch_s =
      host_launch_us ? *host_launch_us * 1e-6 : (calibration ? calibration->host_launch_s : 0.0);
  s.training_host_launch_s =
      s.host_launch_s * (calibration ? calibration->host_launch_training_factor : 1.0);
  s.input_copy_bytes_per_s = calibration && calibration->input_copy_bytes_per_s
                                 ? *calibration->input_copy_bytes_per_s
                                 : kNominalInputCopyBytesPerS;
  return s;
}

namespace {

std::string host_key(std::string_view name) {
  std::string key;
  for (const char c : name)
    if (std::isalnum(static_cast<unsigned char>(c)))
      key += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return key;
}

}  // namespace

HostChoice choose_host(const std::optional<std::string>& host,
                       const device::CalibratedParameters* calibration, std::string_view setting) {
  if (!host) {
    if (!calibration) return {"", 0.0, "no calibration: the host is never the bottleneck"};
    return {calibration->host_launch_source, calibration->host_launch_s,
            fmt::format("{:.1f} us per kernel launch in eager inference, fitted on the times of "
                        "'{}' (the default host; --host for another calibrated one)",
                        calibration->host_launch_s * 1e6, calibration->host_launch_source)};
  }
  std::string known;
  if (calibration) {
    for (const auto& [name, launch_s] : calibration->host_launch_by_host) {
      if (host_key(name) == host_key(*host)) {
        return {name, launch_s,
                fmt::format("{:.1f} us per kernel launch in eager inference, fitted on the times "
                            "of '{}'",
                            launch_s * 1e6, name)};
      }
      known += (known.empty() ? "" : "; ") + name;
    }
  }
  throw InvalidInput(fmt::format(
      "{} {}: not a calibrated host; expected one of: {} (or give the launch time itself)", setting,
      *host, known.empty() ? std::string("none") : known));
}

PreparedTimes prepare_times(const std::vector<NetworkTimeMeasurement>& measurements,
                            const device::DeviceCatalog& catalog, const ProgressCallback& progress,
                            NetworkCache* cache) {
  PreparedTimes result;
  NetworkCache own_cache;
  NetworkCache& networks = cache ? *cache : own_cache;
  if (progress) progress(0, measurements.size());
  for (const NetworkTimeMeasurement& m : measurements) {
    try {
      measured_device(m, catalog);
      if (!(m.measured_s > 0)) throw InvalidInput("the measured time is not positive");
      result.networks.emplace_back(networks.get(m), m);
      result.measurements.push_back(m);
    } catch (const InvalidInput& e) {
      result.failures.emplace_back(m, e.what());
    }
    if (progress)
      progress(result.measurements.size() + result.failures.size(), measurements.size());
  }
  return result;
}

TimeEvaluation evaluate_times(const std::vector<NetworkTimeMeasurement>& measurements,
                              const device::DeviceCatalog& catalog,
                              const TimeEvaluationSettings& settings,
                              const ProgressCallback& progress, NetworkCache* cache) {
  PreparedTimes prepared = prepare_times(measurements, catalog, progress, cache);
  TimeEvaluation result;
  result.failures = std::move(prepared.failures);
  for (std::size_t i = 0; i < prepared.measurements.size(); ++i) {
    const NetworkTimeMeasurement& m = prepared.measurements[i];
    try {
      result.evaluated.push_back(
          {m, prepared.networks[i].predict_s(catalog.find(m.device_id),
                                             settings.host_launch_for(m.mode),
                                             settings.input_copy_bytes_per_s)});
    } catch (const InvalidInput& e) {
      result.failures.emplace_back(m, e.what());
    }
  }
  return result;
}

}  // namespace nnergy::network
