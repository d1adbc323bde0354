#include "nnergy/report/prediction_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "nnergy/core/csv.h"
#include "nnergy/core/error.h"
#include "nnergy/report/quantity_format.h"
#include "nnergy/report/text_table.h"

namespace nnergy::report {

namespace {

using network::LayerPrediction;
using nlohmann::ordered_json;

std::string layer_label(const LayerPrediction& layer) {
  if (!layer.module_path.empty()) return layer.module_path;
  const auto slash = layer.name.find_last_of('/');
  return slash == std::string::npos ? layer.name : layer.name.substr(slash + 1);
}

std::string markers(const LayerPrediction& layer) {
  std::string m;
  if (!layer.whitelisted && layer.node_index) m += '*';
  if (!layer.known_op) m += '?';
  if (layer.power_capped) m += '^';
  return m;
}

std::string mode_text(const network::PredictionSettings& settings) {
  return settings.mode == graph::Mode::kInference
             ? "inference (forward, eval mode)"
             : fmt::format("training (forward + backward + optimizer step: {})",
                           graph::to_string(settings.optimizer));
}

std::string power_limit_text(const network::PowerLimitedClock& l) {
  if (!l.binding) {
    return fmt::format(
        "power limit {:g} W: not reached (predicted {:.0f} W at the boost clock {:g} MHz)",
        l.limit_w, l.unlimited_power_w, l.boost_clock_mhz);
  }
  if (!l.met) {
    return fmt::format(
        "power limit {:g} W: predicted above it even at the lowest clock {:g} MHz (the GPU "
        "would throttle further than its clock table; the figures are at {:g} MHz)",
        l.limit_w, l.clock_mhz, l.clock_mhz);
  }
  return fmt::format(
      "power limit {:g} W: core clock {:g} MHz, found by the model as the highest clock whose "
      "predicted average power stays within the limit ({:.0f} W at the boost clock {:g} MHz)",
      l.limit_w, l.clock_mhz, l.unlimited_power_w, l.boost_clock_mhz);
}

std::string clock_text(const device::DeviceSpec& device, double clock_mhz) {
  std::string which;
  if (clock_mhz == device.clock.boost_mhz) which = " (boost)";
  if (clock_mhz == device.clock.base_mhz) which = " (base)";
  return fmt::format("{:g} MHz{}", clock_mhz, which);
}

// Notes that qualify the numbers; shared by the text and JSON outputs.
// Share of the time or bytes held by unknown operators from which the notes warn first.
constexpr double kMaterialUnknownShare = 0.05;

std::vector<std::string> notes(const PredictionReport& report) {
  const auto& p = report.prediction;
  const device::DeviceSpec& device = *report.device;
  const device::ArchlineParameters archline = device.archline_for(p.settings.point.precision);
  std::vector<std::string> out = report.warnings;
  if (report.sources) {
    out.push_back(fmt::format(
        "all figures are predicted, not measured: times by {}, powers by {}, energy = time × "
        "power (Nicolai §5.1){} — {}",
        report.sources->time, report.sources->power,
        p.optimizer_step_included ? "; the optimizer step by the analytical model" : "",
        p.predictor_description));
  } else {
    out.push_back(fmt::format(
        "all times, powers and energies are predicted by the {} model, not measured: {}",
        p.predictor_name, p.predictor_description));
  }
  if (p.totals.time_std_s > 0 || p.totals.energy_std_j > 0) {
    out.push_back(
        "± figures are 1σ model uncertainties: the predictor's error on whole networks (for the "
        "analytical model, its calibration's leave-one-GPU-out spread) plus per-op errors "
        "propagated assuming that all occurrences of an op share one error and that different "
        "ops' errors are independent");
  } else {
    out.push_back("the predictor gives no uncertainty: figures carry no ± interval");
  }
  for (const std::string& caveat : report.caveats) out.push_back(caveat);
  out.push_back(fmt::format(
      "archline {} parameters of {}: eps_flop {:.2f} pJ/flop, eps_mem {:.2f} pJ/B, pi0 {:.1f} W "
      "({}) — {}",
      device::to_string(p.settings.point.precision), device.id, archline.eps_flop_j * 1e12,
      archline.eps_mem_j_per_byte * 1e12, archline.pi0_w,
      archline.estimated ? "ESTIMATED" : "published measurement", archline.source));
  if (!device.estimated_fields.empty()) {
    out.push_back(
        fmt::format("catalog fields of {} that are estimates, not datasheet or measured "
                    "values: {}",
                    device.id, join_with_commas(device.estimated_fields)));
  }
  out.push_back("bytes are a lower bound: each input, weight and output tensor moved once");
  out.push_back(fmt::format("figures are per iteration of batch {}", p.settings.batch));
  if (p.settings.mode == graph::Mode::kTraining) {
    out.push_back(fmt::format(
        "training = forward (train mode) + backward (data- and weight-gradients, as in PALEO) + "
        "one {} optimizer step over {} parameters; loss and data loading not included",
        graph::to_string(p.settings.optimizer), p.totals.parameter_count));
  }
  if (!p.unknown_ops.empty()) {
    out.push_back("operators unknown to the catalog, predicted with the memory-bound fallback: " +
                  join_with_commas(p.unknown_ops));
    double unknown_time_s = 0;
    double unknown_bytes = 0;
    for (const LayerPrediction& layer : p.layers) {
      if (layer.known_op) continue;
      unknown_time_s += layer.time_s;
      unknown_bytes += layer.byte_count;
    }
    const double time_share = p.totals.time_s > 0 ? unknown_time_s / p.totals.time_s : 0;
    const double byte_share = p.totals.byte_count > 0 ? unknown_bytes / p.totals.byte_count : 0;
    if (std::max(time_share, byte_share) >= kMaterialUnknownShare) {
      // First, where nobody misses it: the totals may be far off.
      out.insert(out.begin(),
                 fmt::format("WARNING: operators nnergy does not know ({}) hold {:.0f} % of the "
                             "predicted time and {:.0f} % of the bytes; their cost is a "
                             "memory-bound guess, so the totals are rough",
                             join_with_commas(p.unknown_ops), 100 * time_share, 100 * byte_share));
    }
  }
  if (report.memory) {
    const network::MemoryEstimate& m = *report.memory;
    out.push_back(network::memory_model_note(m));
    if (!(m.device_memory_bytes > 0)) {
      out.push_back(fmt::format(
          "the catalog gives no memory size for {}: the memory estimate is not checked against "
          "the device",
          device.id));
    } else if (m.exceeds_device_beyond_uncertainty()) {
      out.push_back(fmt::format(
          "WARNING: the estimated peak of {} exceeds the {} of {} by {}; predicted anyway "
          "(--ignore-memory)",
          format_binary_bytes(m.peak_bytes), format_binary_bytes(m.device_memory_bytes), device.id,
          format_binary_bytes(m.peak_bytes - m.device_memory_bytes)));
    } else if (m.exceeds_device()) {
      out.push_back(fmt::format(
          "WARNING: the estimated peak of {} is above the {} of {} but within the estimate's "
          "uncertainty ({:.0f} %): the run may not fit; a smaller batch is safe",
          format_binary_bytes(m.peak_bytes), format_binary_bytes(m.device_memory_bytes), device.id,
          network::kMemoryEstimateUncertainty * 100));
    }
  }
  return out;
}

ordered_json memory_json(const network::MemoryEstimate& m) {
  ordered_json j;
  j["model"] = "estimate: weights + gradients + optimizer state + activations (see notes)";
  j["mode"] = graph::to_string(m.mode);
  j["batch"] = m.batch;
  j["peak_bytes"] = m.peak_bytes;
  j["weights_bytes"] = m.weights_bytes;
  j["gradients_bytes"] = m.gradients_bytes;
  j["optimizer_state_bytes"] = m.optimizer_state_bytes;
  j["activations_bytes"] = m.activations_bytes;
  j["saved_activations_bytes"] = m.saved_activations_bytes;
  j["fixed_bytes"] = m.fixed_bytes;
  j["per_sample_bytes"] = m.per_sample_bytes;
  j["device_memory_bytes"] =
      m.device_memory_bytes > 0 ? ordered_json(m.device_memory_bytes) : ordered_json(nullptr);
  j["device_fraction"] = m.device_memory_bytes > 0
                             ? ordered_json(m.peak_bytes / m.device_memory_bytes)
                             : ordered_json(nullptr);
  j["exceeds_device"] = m.exceeds_device();
  j["exceeds_device_beyond_uncertainty"] = m.exceeds_device_beyond_uncertainty();
  j["largest_fitting_batch"] =
      m.largest_fitting_batch ? ordered_json(*m.largest_fitting_batch) : ordered_json(nullptr);
  j["excludes"] = "CUDA context, cuDNN/cuBLAS workspaces, allocator fragmentation";
  return j;
}

// The "device memory" row of the text totals: value and comment.
std::vector<std::string> memory_row(const network::MemoryEstimate& m,
                                    const device::DeviceSpec& device) {
  std::string parts = "weights " + format_binary_bytes(m.weights_bytes);
  if (m.mode == graph::Mode::kTraining) {
    parts += ", gradients " + format_binary_bytes(m.gradients_bytes) + ", optimizer state " +
             format_binary_bytes(m.optimizer_state_bytes);
  }
  parts += ", activations " + format_binary_bytes(m.activations_bytes);
  std::string comment;
  if (m.device_memory_bytes > 0) {
    comment = fmt::format("peak of {} ({:.0f} %), estimated: {}",
                          format_binary_bytes(m.device_memory_bytes),
                          100 * m.peak_bytes / m.device_memory_bytes, parts);
    if (m.largest_fitting_batch) {
      comment += fmt::format("; largest batch that fits ≈ {}", *m.largest_fitting_batch);
    }
  } else {
    comment = fmt::format("peak, estimated: {}; {} memory unknown", parts, device.id);
  }
  return {"device memory", format_binary_bytes(m.peak_bytes), comment};
}

ordered_json layer_json(const LayerPrediction& layer, double total_energy_j) {
  ordered_json j;
  j["index"] = layer.node_index ? ordered_json(*layer.node_index) : ordered_json(nullptr);
  j["name"] = layer.name;
  j["module_path"] = layer.module_path;
  j["op_type"] = layer.op_type;
  j["op_class"] = std::string(graph::to_string(layer.op_class));
  j["output_shape"] = layer.output_shape;
  j["unique_op"] = layer.unique_op;
  j["mac_count"] = layer.mac_count;
  j["flop_count"] = layer.flop_count;
  j["byte_count"] = layer.byte_count;
  j["parameter_count"] = layer.parameter_count;
  j["time_s"] = layer.time_s;
  j["forward_time_s"] = layer.forward_time_s;
  j["power_w"] = layer.power_w;
  j["energy_j"] = layer.energy_j;
  j["energy_share"] = total_energy_j > 0 ? layer.energy_j / total_energy_j : 0.0;
  j["whitelisted"] = layer.whitelisted;
  j["known_op"] = layer.known_op;
  j["compute_bound"] = layer.compute_bound;
  j["power_capped"] = layer.power_capped;
  j["time_std_s"] = layer.time_std_s;
  j["power_std_w"] = layer.power_std_w;
  j["energy_std_j"] = layer.energy_std_j;
  return j;
}

// Share of the iteration the GPU must wait for the host before the text calls it host-bound (the
// first launch always makes it wait a little).
constexpr double kHostBoundShare = 0.05;

ordered_json totals_json(const network::NetworkTotals& t) {
  ordered_json j;
  j["time_s"] = t.time_s;
  j["energy_j"] = t.energy_j;
  j["power_w"] = t.power_w;
  j["edp_j_s"] = t.edp_j_s;
  j["energy_per_sample_j"] = t.energy_per_sample_j;
  j["mac_count"] = t.mac_count;
  j["flop_count"] = t.flop_count;
  j["byte_count"] = t.byte_count;
  j["parameter_count"] = t.parameter_count;
  j["time_std_s"] = t.time_std_s;
  j["energy_std_j"] = t.energy_std_j;
  j["edp_std_j_s"] = t.edp_std_j_s;
  j["gpu_time_s"] = t.gpu_time_s;
  j["kernel_count"] = t.kernel_count;
  j["host_launch_s"] = t.host_launch_s;
  return j;
}

std::string layers_table(const PredictionReport& report, const TextOptions& options) {
  const auto& p = report.prediction;
  std::vector<std::size_t> order(p.layers.size());
  std::iota(order.begin(), order.end(), 0);
  if (options.sort_by_energy) {
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      return p.layers[a].energy_j > p.layers[b].energy_j;
    });
  }
  const std::size_t shown = options.top == 0 ? order.size() : std::min(options.top, order.size());
  TextTable table;
  using A = TextTable::Align;
  table.add_column("layer", A::kLeft);
  table.add_column("op", A::kLeft);
  table.add_column("output shape", A::kLeft);
  table.add_column("GFLOP", A::kRight);
  table.add_column("MB", A::kRight);
  table.add_column("time ms", A::kRight);
  table.add_column("power W", A::kRight);
  table.add_column("energy mJ", A::kRight);
  table.add_column("share %", A::kRight);
  const bool with_std = std::any_of(p.layers.begin(), p.layers.end(),
                                    [](const LayerPrediction& l) { return l.time_std_s > 0; });
  if (with_std) table.add_column("σ time ms", A::kRight);
  double shown_energy = 0;
  for (std::size_t i = 0; i < shown; ++i) {
    const LayerPrediction& l = p.layers[order[i]];
    shown_energy += l.energy_j;
    std::vector<std::string> row = {layer_label(l),
                                    l.op_type + markers(l),
                                    graph::to_string(l.output_shape),
                                    fmt::format("{:.3f}", l.flop_count / 1e9),
                                    fmt::format("{:.2f}", l.byte_count / 1e6),
                                    fmt::format("{:.4f}", l.time_s * 1e3),
                                    fmt::format("{:.0f}", l.power_w),
                                    fmt::format("{:.3f}", l.energy_j * 1e3),
                                    fmt::format("{:.2f}", 100 * l.energy_j / p.totals.energy_j)};
    if (with_std) row.push_back(fmt::format("{:.4f}", l.time_std_s * 1e3));
    table.add_row(std::move(row));
  }
  std::string out = fmt::format("Per layer, {} ({} of {} layers; --top 0 lists all):\n",
                                options.sort_by_energy ? "by energy" : "in network order", shown,
                                p.layers.size());
  out += table.render();
  if (shown < p.layers.size()) {
    out += fmt::format("… {} more layers with {:.1f} % of the energy\n", p.layers.size() - shown,
                       100 * (1 - shown_energy / p.totals.energy_j));
  }
  out += fmt::format(
      "markers: * outside the compute whitelist (still predicted), ? unknown operator "
      "(memory-bound "
      "fallback), ^ power-capped; {} shape-arithmetic nodes (Shape, Constant, ...) cost nothing "
      "and "
      "are not listed\n",
      p.shape_nodes);
  return out;
}

// How sure the sweep is of one optimum, in one line.
std::string confidence_text(const std::string& what, const network::OptimumConfidence& c,
                            const std::vector<network::ClockPoint>& points) {
  if (!c.uncertainty_known) {
    return fmt::format("{} optimum: no uncertainty from this predictor, so no confidence\n", what);
  }
  if (c.indistinguishable.size() <= 1) {
    return fmt::format(
        "{} optimum: clear — the runner-up ({:g} MHz) is {:.1f}σ worse and no other clock's 1σ "
        "interval overlaps the optimum's\n",
        what, points[c.runner_up].clock_mhz, c.margin_sigma);
  }
  return fmt::format(
      "{} optimum: uncertain — the runner-up ({:g} MHz) is {:.1f}σ worse; {} clocks from {:g} to "
      "{:g} MHz have 1σ intervals overlapping the optimum's (intervals taken as independent, "
      "which overstates the doubt: one model's errors are shared across clocks)\n",
      what, points[c.runner_up].clock_mhz, c.margin_sigma, c.indistinguishable.size(),
      points[c.indistinguishable.front()].clock_mhz, points[c.indistinguishable.back()].clock_mhz);
}

nlohmann::ordered_json confidence_json(const network::OptimumConfidence& c,
                                       const std::vector<network::ClockPoint>& points) {
  ordered_json clocks = ordered_json::array();
  for (const std::size_t i : c.indistinguishable) clocks.push_back(points[i].clock_mhz);
  ordered_json j;
  j["uncertainty_known"] = c.uncertainty_known;
  j["runner_up_clock_mhz"] = points[c.runner_up].clock_mhz;
  j["margin_sigma"] =
      std::isfinite(c.margin_sigma) ? ordered_json(c.margin_sigma) : ordered_json(nullptr);
  j["overlaps_runner_up"] = c.overlaps_runner_up;
  j["indistinguishable_clocks_mhz"] = clocks;
  return j;
}

std::string with_std(double value, double stddev, const std::string& unit) {
  if (!(stddev > 0)) return format_quantity(value, unit);
  return format_quantity(value, unit) + " ± " + format_quantity(stddev, unit);
}

std::string sweep_table(const PredictionReport& report) {
  const network::ClockSweep& sweep = *report.sweep;
  const auto& pts = sweep.points;
  // Show at most ~16 evenly spaced rows, always with the ends and both optima.
  const std::size_t stride = std::max<std::size_t>(1, (pts.size() + 14) / 15);
  TextTable table;
  using A = TextTable::Align;
  table.add_column("clock MHz", A::kRight);
  table.add_column("time ms", A::kRight);
  table.add_column("power W", A::kRight);
  table.add_column("energy J", A::kRight);
  table.add_column("EDP J·s", A::kRight);
  const bool with_std = sweep.energy_confidence.uncertainty_known;
  if (with_std) table.add_column("σ energy J", A::kRight);
  table.add_column("", A::kLeft);
  std::size_t rows = 0;
  for (std::size_t i = 0; i < pts.size(); ++i) {
    const bool energy_opt = i == sweep.energy_optimal;
    const bool edp_opt = i == sweep.edp_optimal;
    if (i % stride != 0 && i + 1 != pts.size() && !energy_opt && !edp_opt) continue;
    std::string tag;
    if (energy_opt) tag += "<- energy-optimal ";
    if (edp_opt) tag += "<- EDP-optimal";
    std::vector<std::string> row = {
        fmt::format("{:g}", pts[i].clock_mhz), fmt::format("{:.3f}", pts[i].time_s * 1e3),
        fmt::format("{:.0f}", pts[i].power_w), fmt::format("{:.4f}", pts[i].energy_j),
        fmt::format("{:.4g}", pts[i].edp_j_s)};
    if (with_std) row.push_back(fmt::format("{:.4f}", pts[i].energy_std_j));
    row.push_back(tag);
    table.add_row(std::move(row));
    ++rows;
  }
  const auto& e = pts[sweep.energy_optimal];
  const auto& d = pts[sweep.edp_optimal];
  const auto& top = pts.back();
  std::string out = fmt::format(
      "Clock sweep ({} clocks from {:g} to {:g} MHz, {} shown; all in "
      "--json/--csv):\n",
      pts.size(), pts.front().clock_mhz, top.clock_mhz, rows);
  out += table.render();
  out += fmt::format(
      "energy-optimal clock: {:g} MHz — {} per iteration, {:+.1f} % energy and {:+.1f} % time vs "
      "{:g} MHz\n",
      e.clock_mhz, format_quantity(e.energy_j, "J"), 100 * (e.energy_j / top.energy_j - 1),
      100 * (e.time_s / top.time_s - 1), top.clock_mhz);
  out += fmt::format(
      "EDP-optimal clock:    {:g} MHz — {} per iteration, {:+.1f} % energy and {:+.1f} % time vs "
      "{:g} MHz\n",
      d.clock_mhz, format_quantity(d.energy_j, "J"), 100 * (d.energy_j / top.energy_j - 1),
      100 * (d.time_s / top.time_s - 1), top.clock_mhz);
  out += confidence_text("energy", sweep.energy_confidence, pts);
  out += confidence_text("EDP", sweep.edp_confidence, pts);
  return out;
}

// The device's roofs and archline parameters at the prediction's clock and precision, for
// placing the layers on a roofline (intensity flops/bytes, attained flops/time_s) and an
// archline (flops/energy_j).
ordered_json roofline_json(const PredictionReport& report) {
  const device::DeviceSpec& device = *report.device;
  const device::OperatingPoint& point = report.prediction.settings.point;
  const double clock_ratio =
      device.clock.boost_mhz > 0 ? point.clock_mhz / device.clock.boost_mhz : 1.0;
  const std::optional<double> peak = device.peak(point.precision);
  const double efficiency = device.has_matrix_units(point.precision)
                                ? device.efficiency.tensor.value_or(device.efficiency.compute)
                                : device.efficiency.compute;
  const device::ArchlineParameters archline = device.archline_for(point.precision);
  const auto number_or_null = [](std::optional<double> v) {
    return v ? ordered_json(*v) : ordered_json(nullptr);
  };
  return {
      {"precision", std::string(device::to_string(point.precision))},
      {"clock_mhz", point.clock_mhz},
      {"peak_flop_per_s", number_or_null(peak ? std::optional(*peak * clock_ratio) : std::nullopt)},
      {"attainable_flop_per_s",
       number_or_null(peak ? std::optional(*peak * clock_ratio * efficiency) : std::nullopt)},
      {"bandwidth_bytes_per_s", device.memory_bandwidth_byte_per_s},
      {"attainable_bytes_per_s", device.memory_bandwidth_byte_per_s * device.efficiency.memory},
      {"eps_flop_j", archline.eps_flop_j},
      {"eps_mem_j_per_byte", archline.eps_mem_j_per_byte},
      {"pi0_w", archline.pi0_w},
      {"archline_estimated", archline.estimated}};
}

}  // namespace

std::string render_text(const PredictionReport& report, const TextOptions& options) {
  if (report.network == nullptr || report.device == nullptr) {
    throw InternalError("render_text: report without network or device");
  }
  const auto& p = report.prediction;
  const auto& net = *report.network;
  const device::DeviceSpec& device = *report.device;
  std::string out;
  out += fmt::format("nnergy predict: {} ({}){}\n", net.name, net.source,
                     net.description.empty() ? "" : " — " + net.description);
  out += fmt::format("  mode {}, batch {}, precision {}\n", mode_text(p.settings), p.settings.batch,
                     device::to_string(p.settings.point.precision));
  out += fmt::format("  device {} ({}), core clock {}, TDP {:g} W, idle {:g} W\n", device.name,
                     device.id, clock_text(device, p.settings.point.clock_mhz), device.tdp_w,
                     device.idle_w);
  if (report.power_limit) out += "  " + power_limit_text(*report.power_limit) + "\n";
  out += fmt::format("  predictor: {}\n", p.predictor_name);
  if (report.sources) {
    out += fmt::format("    time: {}\n    power: {}\n    energy: time × power\n",
                       report.sources->time, report.sources->power);
  }
  out += "\n";

  if (report.sweep) {
    out += sweep_table(report);
  } else {
    out += layers_table(report, options);
  }

  const auto& t = p.totals;
  const double samples_per_s = t.time_s > 0 ? static_cast<double>(p.settings.batch) / t.time_s : 0;
  out += fmt::format("\nTotals per iteration at {} (predicted, {} model):\n",
                     clock_text(device, p.settings.point.clock_mhz), p.predictor_name);
  TextTable totals;
  totals.add_column("quantity", TextTable::Align::kLeft);
  totals.add_column("value", TextTable::Align::kRight);
  totals.add_column("", TextTable::Align::kLeft);
  totals.add_row({"time", with_std(t.time_s, t.time_std_s, "s"),
                  fmt::format("{:.0f} samples/s", samples_per_s)});
  totals.add_row({"energy", with_std(t.energy_j, t.energy_std_j, "J"),
                  format_quantity(t.energy_per_sample_j, "J") + " per sample"});
  totals.add_row({"average power", format_quantity(t.power_w, "W"),
                  fmt::format("{:.0f} % of TDP", 100 * t.power_w / device.tdp_w)});
  totals.add_row({"energy-delay product", with_std(t.edp_j_s, t.edp_std_j_s, "J·s"), "E × T"});
  totals.add_row({"work", format_quantity(t.flop_count, "FLOP"),
                  format_quantity(t.mac_count, "MAC") + ", " + format_quantity(t.byte_count, "B") +
                      " moved (lower bound)"});
  totals.add_row({"parameters", format_quantity(static_cast<double>(t.parameter_count), ""),
                  fmt::format("{} unique of {} operations", p.unique_operations,
                              p.layers.size() - (p.optimizer_step_included ? 1 : 0))});
  if (report.energy_precision) {
    const EnergyPrecision& m = *report.energy_precision;
    totals.add_row({"energy-precision ratio", format_quantity(m.ratio_j, "J"),
                    fmt::format("M = error^alpha × energy per sample, error {:g}, alpha {:g}",
                                m.error, m.alpha)});
  }
  if (p.settings.host_launch_s > 0) {
    totals.add_row(
        {"kernel launches", fmt::format("{:.0f}", t.kernel_count),
         fmt::format(
             "host {} at {} each; GPU busy {}{}", format_quantity(t.host_launch_s, "s"),
             format_quantity(p.settings.host_launch_s, "s"), format_quantity(t.gpu_time_s, "s"),
             t.time_s > t.gpu_time_s * (1 + 1e-9)
                 ? fmt::format(
                       ", waits {} for the host{}", format_quantity(t.time_s - t.gpu_time_s, "s"),
                       t.time_s - t.gpu_time_s > kHostBoundShare * t.time_s ? " (host-bound)" : "")
                 : std::string())});
  }
  if (report.memory) totals.add_row(memory_row(*report.memory, device));
  out += totals.render();
  out += "\nNotes:\n";
  for (const std::string& note : notes(report)) out += "  - " + note + "\n";
  return out;
}

nlohmann::ordered_json to_json(const PredictionReport& report) {
  const auto& p = report.prediction;
  ordered_json j;
  j["context"] = report.context.to_json();
  j["models"] = {{"time", report.sources ? report.sources->time : p.predictor_name},
                 {"power", report.sources ? report.sources->power : p.predictor_name},
                 {"energy", "time × power"},
                 {"optimizer_step",
                  p.optimizer_step_included ? ordered_json("analytical") : ordered_json(nullptr)}};
  j["totals"] = totals_json(p.totals);
  j["totals"]["memory_peak_bytes"] =
      report.memory ? ordered_json(report.memory->peak_bytes) : ordered_json(nullptr);
  j["memory"] = report.memory ? memory_json(*report.memory) : ordered_json(nullptr);
  ordered_json layers = ordered_json::array();
  for (const LayerPrediction& layer : p.layers)
    layers.push_back(layer_json(layer, p.totals.energy_j));
  j["layers"] = std::move(layers);
  j["unique_operations"] = p.unique_operations;
  j["shape_nodes"] = p.shape_nodes;
  j["unknown_ops"] = p.unknown_ops;
  j["notes"] = notes(report);
  j["roofline"] = roofline_json(report);
  if (report.sweep) {
    ordered_json points = ordered_json::array();
    for (const auto& pt : report.sweep->points) {
      points.push_back({{"clock_mhz", pt.clock_mhz},
                        {"time_s", pt.time_s},
                        {"power_w", pt.power_w},
                        {"energy_j", pt.energy_j},
                        {"edp_j_s", pt.edp_j_s},
                        {"time_std_s", pt.time_std_s},
                        {"energy_std_j", pt.energy_std_j},
                        {"edp_std_j_s", pt.edp_std_j_s}});
    }
    const auto& pts = report.sweep->points;
    j["clock_sweep"] = {{"points", points},
                        {"energy_optimal_clock_mhz", pts[report.sweep->energy_optimal].clock_mhz},
                        {"edp_optimal_clock_mhz", pts[report.sweep->edp_optimal].clock_mhz},
                        {"energy_optimum", confidence_json(report.sweep->energy_confidence, pts)},
                        {"edp_optimum", confidence_json(report.sweep->edp_confidence, pts)}};
  }
  if (report.power_limit) {
    const network::PowerLimitedClock& l = *report.power_limit;
    j["power_limit"] = {{"limit_w", l.limit_w},
                        {"clock_mhz", l.clock_mhz},
                        {"boost_clock_mhz", l.boost_clock_mhz},
                        {"unlimited_power_w", l.unlimited_power_w},
                        {"binding", l.binding},
                        {"met", l.met}};
  }
  if (report.energy_precision) {
    j["energy_precision"] = {{"error", report.energy_precision->error},
                             {"alpha", report.energy_precision->alpha},
                             {"ratio_j", report.energy_precision->ratio_j}};
  }
  return j;
}

std::string render_csv(const PredictionReport& report) {
  const auto& p = report.prediction;
  std::string out = report.context.to_csv_comments();
  if (report.memory) {
    out += fmt::format("# memory_peak_bytes: {:.0f}\n# memory: {}\n", report.memory->peak_bytes,
                       memory_json(*report.memory).dump());
  }
  if (report.sweep) {
    out +=
        "clock_mhz,time_s,power_w,energy_j,edp_j_s,energy_optimal,edp_optimal,time_std_s,"
        "energy_std_j,edp_std_j_s\n";
    for (std::size_t i = 0; i < report.sweep->points.size(); ++i) {
      const auto& pt = report.sweep->points[i];
      out += fmt::format("{:g},{:.9g},{:.9g},{:.9g},{:.9g},{},{},{:.9g},{:.9g},{:.9g}\n",
                         pt.clock_mhz, pt.time_s, pt.power_w, pt.energy_j, pt.edp_j_s,
                         i == report.sweep->energy_optimal ? "true" : "false",
                         i == report.sweep->edp_optimal ? "true" : "false", pt.time_std_s,
                         pt.energy_std_j, pt.edp_std_j_s);
    }
    return out;
  }
  out +=
      "index,name,module_path,op_type,op_class,output_shape,mac_count,flop_count,byte_count,"
      "parameter_count,time_s,"
      "forward_time_s,power_w,energy_j,energy_share,whitelisted,known_op,compute_bound,"
      "power_capped,time_std_s,power_std_w,energy_std_j\n";
  for (const LayerPrediction& l : p.layers) {
    out += fmt::format(
        "{},{},{},{},{},{},{:.9g},{:.9g},{:.9g},{},{:.9g},{:.9g},{:.9g},{:.9g},{:.9g},{},{},{},{},"
        "{:.9g},{:.9g},{:.9g}\n",
        l.node_index ? std::to_string(*l.node_index) : "", csv::field(l.name),
        csv::field(l.module_path), csv::field(l.op_type), graph::to_string(l.op_class),
        csv::field(graph::to_string(l.output_shape)), l.mac_count, l.flop_count, l.byte_count,
        l.parameter_count, l.time_s, l.forward_time_s, l.power_w, l.energy_j,
        p.totals.energy_j > 0 ? l.energy_j / p.totals.energy_j : 0.0, l.whitelisted, l.known_op,
        l.compute_bound, l.power_capped, l.time_std_s, l.power_std_w, l.energy_std_j);
  }
  return out;
}

}  // namespace nnergy::report
