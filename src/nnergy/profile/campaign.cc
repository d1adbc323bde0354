#include "nnergy/profile/campaign.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string_view>

#include "nnergy/core/error.h"
#include "nnergy/core/setting_name.h"
#include "nnergy/core/text.h"
#include "nnergy/graph/onnx_importer.h"
#include "nnergy/graph/op_signature.h"
#include "nnergy/graph/zoo.h"
#include "nnergy/measure/measurement_window.h"
#include "nnergy/measure/power_source.h"
#include "nnergy/measure/sampler.h"
#include "nnergy/profile/op_timer.h"

namespace nnergy::profile {

namespace {

std::string input_shapes(const graph::Network& network, const graph::Node& node) {
  std::string text;
  for (std::size_t t : node.inputs) {
    const graph::TensorInfo& tensor = network.tensor(t);
    if (tensor.shape_valued || tensor.role == graph::TensorRole::kConstant) continue;
    if (!text.empty()) text += " ";
    text += graph::to_string(tensor.shape);
  }
  return text;
}

double steady_now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Power of one window summed over the sources (RAPL reports one zone per package), as the
// window's mean power; the window spans warm-up and calibration too, which run the same op.
struct WindowPower {
  std::optional<double> power_w;
  std::optional<double> power_std_w;
  std::int64_t kept = 0;
  std::int64_t dropped = 0;
};

WindowPower window_power(const measure::Measurement& m) {
  WindowPower p;
  double sum = 0, variance = 0;
  bool any = false;
  for (const measure::SourceMeasurement& s : m.sources) {
    p.kept += static_cast<std::int64_t>(s.samples_used);
    p.dropped += static_cast<std::int64_t>(s.samples_total - s.samples_used);
    if (s.source_failed || !s.power_mean_w) continue;
    any = true;
    sum += *s.power_mean_w;
    variance += s.power_sigma_w ? *s.power_sigma_w * *s.power_sigma_w : 0.0;
  }
  if (any) {
    p.power_w = sum;
    p.power_std_w = std::sqrt(variance);
  }
  return p;
}

bool network_measured(const dataset::DatasetStore& store, std::int64_t device_id,
                      const graph::Network& net, const dataset::MeasurementKey& key) {
  const std::string inputs = dataset::network_inputs_json(net);
  for (const dataset::NetworkMeasurementRecord& m : store.network_measurements()) {
    if (m.device_id == device_id && m.network_name == net.name && m.network_inputs_json == inputs &&
        m.mode == key.mode && m.clock_mhz == key.clock_mhz && m.dtype == key.dtype &&
        m.values.status == dataset::MeasurementStatus::kOk) {
      return true;
    }
  }
  return false;
}

// Loops of 1/7 to 7/7 of the calibrated count (the shortest about min_time_s / 7), two rounds:
// seed 000 §4.2.3's check at a fraction of one more measurement's cost per op kind.
ProportionalityReport check_proportionality(OpRunner& runner, const PlannedMeasurement& planned,
                                            std::int64_t calibrated_iterations) {
  ProportionalityReport report;
  report.op_type = planned.op_type;
  report.shapes = planned.shapes;
  report.mode = planned.mode;
  const std::int64_t unit = std::max<std::int64_t>(1, calibrated_iterations / 7);
  std::vector<std::int64_t> counts;
  for (std::int64_t k = 1; k <= 7; ++k) counts.push_back(k * unit);
  try {
    report.fit = measure_proportionality(runner, planned.mode, counts, 2);
  } catch (const std::exception& e) {
    report.error = e.what();
  }
  return report;
}

}  // namespace

graph::DataType parse_campaign_dtype(const std::string& text, const std::string& flag) {
  if (text == "fp32") return graph::DataType::kFloat32;
  if (text == "bf16") return graph::DataType::kBFloat16;
  if (text == "fp16") return graph::DataType::kFloat16;
  throw InvalidInput(
      fmt::format("{} '{}': expected fp32, bf16 or fp16 (fp16 on CUDA only)", flag, text));
}

std::vector<graph::Mode> parse_modes(const std::string& text, const std::string& flag) {
  std::vector<graph::Mode> modes;
  for (const std::string& word : split_trimmed(text, ',')) {
    graph::Mode mode;
    if (word == "inference") {
      mode = graph::Mode::kInference;
    } else if (word == "training") {
      mode = graph::Mode::kTraining;
    } else {
      throw InvalidInput(
          fmt::format("{} '{}': expected a comma-separated list of inference, training; found "
                      "'{}'",
                      flag, text, word));
    }
    if (std::find(modes.begin(), modes.end(), mode) == modes.end()) modes.push_back(mode);
  }
  return modes;
}

void check_options(const CampaignOptions& options) {
  const SettingNames names = options.names;
  const auto given = [&](std::string_view setting, const auto& value) {
    return setting_with_value(names, setting, fmt::format("{}", value));
  };
  const std::string models = setting_name(names, "models");
  if (options.models.empty()) throw InvalidInput(models + ": expected at least one model");
  for (const std::string& m : options.models) {
    if (m.empty()) throw InvalidInput(models + ": empty model name in the list");
  }
  if (options.modes.empty()) {
    throw InvalidInput(setting_name(names, "modes") + ": expected at least one mode");
  }
  if (options.batch < 1)
    throw InvalidInput(given("batch", options.batch) + ": expected a positive integer");
  if (!(options.min_time_s > 0)) {
    throw InvalidInput(given("min_time_s", options.min_time_s) + ": expected a duration > 0 s");
  }
  if (options.repeats < 1) {
    throw InvalidInput(given("repeats", options.repeats) + ": expected an integer >= 1");
  }
  const std::string on_cpu = given("device", "cpu");
  if (options.cuda_device < 0 && options.dtype == graph::DataType::kFloat16) {
    throw InvalidInput(given("dtype", "fp16") +
                       ": runs on CUDA only (LibTorch's CPU half-precision kernels are "
                       "reference code); use fp32 or bf16 on " +
                       on_cpu);
  }
  const std::string tf32 = setting_name(names, "tf32");
  if (options.tf32 && options.cuda_device < 0) {
    throw InvalidInput(tf32 + ": TF32 is a mode of NVIDIA tensor cores; not on " + on_cpu);
  }
  if (options.tf32 && options.dtype != graph::DataType::kFloat32) {
    throw InvalidInput(tf32 + " with " + given("dtype", graph::to_string(options.dtype)) +
                       ": TF32 applies to fp32 only");
  }
  const std::string clocks_name = setting_name(names, "clocks_mhz");
  if (options.clocks_mhz.empty()) throw InvalidInput(clocks_name + ": expected at least one clock");
  std::set<std::int64_t> clocks;
  for (std::int64_t c : options.clocks_mhz) {
    if (c < 0) throw InvalidInput(given("clocks_mhz", c) + ": expected MHz >= 0");
    if (!clocks.insert(c).second) {
      throw InvalidInput(fmt::format("{}: clock {} MHz given twice", clocks_name, c));
    }
  }
}

std::vector<graph::Network> import_networks(const CampaignOptions& options) {
  check_options(options);
  graph::DimBindings bindings;
  bindings.batch = options.batch;
  std::vector<graph::Network> networks;
  for (const std::string& model : options.models) {
    graph::Network net =
        graph::import_onnx(graph::resolve_model(model, options.data_dir), bindings);
    if (net.name.empty()) net.name = model;
    networks.push_back(std::move(net));
  }
  return networks;
}

CampaignPlan plan_campaign(const CampaignOptions& options, const dataset::DatasetStore* store,
                           std::int64_t device_id) {
  return plan_campaign(options, import_networks(options), store, device_id);
}

CampaignPlan plan_campaign(const CampaignOptions& options, std::vector<graph::Network> networks,
                           const dataset::DatasetStore* store, std::int64_t device_id) {
  check_options(options);
  CampaignPlan plan;
  plan.networks = std::move(networks);
  const std::string dtype = key_dtype(options);
  std::set<dataset::MeasurementKey> seen;
  for (const std::int64_t clock : options.clocks_mhz) {
    std::vector<PlannedMeasurement> network_pending;
    for (std::size_t n = 0; n < plan.networks.size(); ++n) {
      const graph::Network& net = plan.networks[n];
      const auto ops = graph::unique_operations(net, options.whitelist);
      for (graph::Mode mode : options.modes) {
        PlanCount count{net.name, mode, clock, 0, 0, 0};
        for (const graph::UniqueOperation& op : ops) {
          if (!op.whitelisted) continue;
          dataset::MeasurementKey key{op.signature, std::string(to_string(mode)), clock, dtype};
          const bool measured = store != nullptr && store->is_measured(device_id, key);
          if (measured) ++count.already_measured;
          if (!seen.insert(key).second) continue;
          if (measured) {
            ++plan.skipped;
            continue;
          }
          if (!options.shard.contains(key)) {
            ++plan.other_shards;
            continue;
          }
          const graph::Node& node = net.nodes()[op.nodes.front()];
          plan.pending.push_back(
              {n, op.nodes.front(), op.op_type, input_shapes(net, node), mode, std::move(key)});
          ++count.to_measure;
        }
        if (options.measure_networks) {
          dataset::MeasurementKey key{"", std::string(to_string(mode)), clock, dtype};
          if (store != nullptr && network_measured(*store, device_id, net, key)) {
            ++plan.skipped;
          } else {
            count.network_to_measure = 1;
            network_pending.push_back({n, 0, "network", net.name, mode, std::move(key), true});
          }
        }
        plan.counts.push_back(count);
      }
    }
    // Networks last at each clock: their ops are then in the file even when a network cannot
    // be run.
    plan.pending.insert(plan.pending.end(), network_pending.begin(), network_pending.end());
  }
  return plan;
}

double estimated_duration_s(const CampaignPlan& plan, const CampaignOptions& options) {
  return static_cast<double>(plan.pending.size()) * (options.repeats + 1) * options.min_time_s;
}

CampaignSummary run_campaign(const CampaignPlan& plan, const CampaignOptions& options,
                             dataset::DatasetStore& store, std::int64_t session_id,
                             const std::atomic<bool>& stop,
                             const std::function<void(const CampaignProgress&)>& progress,
                             const ClockSetter& set_clock) {
  for (const PlannedMeasurement& planned : plan.pending) {
    if (planned.key.clock_mhz != 0 && !set_clock) {
      throw InvalidInput(fmt::format(
          "clock {} MHz: this device's clock cannot be locked; measure at its default clock",
          planned.key.clock_mhz));
    }
  }
  const double start_s = steady_now_s();
  CampaignSummary summary;
  summary.skipped = plan.skipped;

  // The power of the device the runners use: the CPU's own energy counter, or the GPU's through
  // NVML (a GPU's power says nothing about CPU runners, nor the CPU's about GPU runners).
  measure::Detection detection = measure::SourceRegistry::standard().open(
      options.cuda_device < 0
          ? "rapl"
          : "nvml:" +
                std::to_string(options.nvml_gpu >= 0 ? options.nvml_gpu : options.cuda_device));
  for (const auto& u : detection.unavailable) {
    summary.power_absent.push_back(u.source + ": " + u.reason);
  }
  for (const auto& s : detection.sources) summary.power_sources.push_back(s->info().name);
  std::unique_ptr<measure::Sampler> sampler;
  std::unique_ptr<measure::Meter> meter;
  if (!detection.sources.empty()) {
    sampler =
        std::make_unique<measure::Sampler>(std::move(detection.sources), measure::SamplerOptions{});
    sampler->start();
    meter = std::make_unique<measure::Meter>(*sampler);
  }

  RunnerOptions runner_options;
  runner_options.dtype = options.dtype;
  runner_options.cuda_device = options.cuda_device;
  if (options.cuda_device >= 0) set_tf32(options.tf32);
  TimingOptions timing_options;
  timing_options.min_time_s = options.min_time_s;
  timing_options.repeats = options.repeats;

  const auto total = static_cast<std::int64_t>(plan.pending.size());
  std::int64_t done = 0;
  auto report = [&](const PlannedMeasurement* current) {
    if (!progress) return;
    CampaignProgress p;
    p.done = done;
    p.total = total;
    p.current = current;
    p.elapsed_s = steady_now_s() - start_s;
    p.eta_s = done > 0 ? p.elapsed_s / static_cast<double>(done) * static_cast<double>(total - done)
                       : 0.0;
    progress(p);
  };

  std::set<std::string> proportionality_checked;
  std::optional<std::int64_t> clock_set;
  for (const PlannedMeasurement& planned : plan.pending) {
    if (stop.load()) {
      summary.interrupted = true;
      break;
    }
    if (set_clock && clock_set != planned.key.clock_mhz) {
      set_clock(planned.key.clock_mhz);
      clock_set = planned.key.clock_mhz;
    }
    report(&planned);
    const graph::Network& net = plan.networks[planned.network];
    const graph::Node& node = net.nodes()[planned.node];
    dataset::MeasurementRecord record;
    record.session_id = session_id;
    record.key = planned.key;
    double window_s = 0;
    try {
      std::unique_ptr<OpRunner> runner = planned.whole_network
                                             ? OpRunner::build_network(net, runner_options)
                                             : OpRunner::build(net, node, runner_options);
      const std::optional<std::size_t> handle =
          meter ? std::optional<std::size_t>(meter->begin()) : std::nullopt;
      const OpTiming timing = time_op(*runner, planned.mode, timing_options);
      record.values.iterations = timing.iterations;
      record.values.repeats = static_cast<std::int64_t>(timing.measurements_s.size());
      record.values.time_s = timing.mean_s;
      record.values.time_std_s = timing.stddev_s;
      for (double s : timing.measurements_s) window_s += s;
      if (handle) {
        const WindowPower p = window_power(meter->end(*handle));
        record.values.samples_kept = p.kept;
        record.values.samples_dropped = p.dropped;
        if (p.power_w) {
          record.values.power_w = p.power_w;
          record.values.power_std_w = p.power_std_w;
          // Seed 000 Eqs. 4.4–4.5 per iteration: mean power times time per iteration.
          record.values.energy_j = *p.power_w * timing.mean_s;
          record.values.energy_std_j = p.power_std_w.value_or(0.0) * timing.mean_s;
        }
      }
      if (!planned.whole_network && !runner->has_backward() &&
          planned.mode == graph::Mode::kTraining) {
        record.values.message = "no input needs a gradient: training is the forward pass only";
      }
      if (options.check_proportionality && !planned.whole_network &&
          proportionality_checked.insert(planned.op_type).second) {
        summary.proportionality.push_back(
            check_proportionality(*runner, planned, timing.iterations));
        const ProportionalityReport& r = summary.proportionality.back();
        record.values.message +=
            fmt::format("{}proportionality check of op kind {}: {}",
                        record.values.message.empty() ? "" : "; ", planned.op_type,
                        r.error.empty() ? fmt::format("R² {:.4f} over {} loop lengths",
                                                      r.fit.r_squared, r.fit.iterations.size())
                                        : "failed: " + r.error);
      }
    } catch (const std::exception& e) {
      record.values = dataset::MeasuredValues{};
      record.values.status = dataset::MeasurementStatus::kError;
      record.values.message = e.what();
      window_s = 0;
    }
    // A stop that arrived during the measurement may have cut it short or slowed it: discard.
    if (stop.load()) {
      summary.interrupted = true;
      break;
    }
    if (planned.whole_network) {
      dataset::NetworkMeasurementRecord n;
      n.session_id = session_id;
      n.network_name = net.name;
      n.network_inputs_json = dataset::network_inputs_json(net);
      n.mode = planned.key.mode;
      n.clock_mhz = planned.key.clock_mhz;
      n.dtype = planned.key.dtype;
      n.values = record.values;
      store.record_network_measurement(n);
    } else {
      store.record_measurement(record);
    }
    if (record.values.status == dataset::MeasurementStatus::kOk) {
      ++summary.measured;
      summary.measured_s += window_s;
    } else {
      ++summary.errors;
    }
    ++done;
  }
  if (sampler) sampler->stop();
  report(nullptr);
  summary.wall_s = steady_now_s() - start_s;
  return summary;
}

std::string key_dtype(const CampaignOptions& options) {
  if (options.tf32 && options.dtype == graph::DataType::kFloat32) return "tf32";
  return std::string(graph::to_string(options.dtype));
}

dataset::DeviceRecord cpu_device() {
  dataset::DeviceRecord device;
  device.name = "cpu";
  device.kind = "cpu";
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("model name", 0) != 0) continue;
    const auto colon = line.find(':');
    if (colon != std::string::npos) device.name = std::string(trim(line.substr(colon + 1)));
    break;
  }
  return device;
}

}  // namespace nnergy::profile
