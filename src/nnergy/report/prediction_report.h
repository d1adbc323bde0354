#pragma once

#include <cstddef>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "nnergy/core/run_context.h"
#include "nnergy/device/device_spec.h"
#include "nnergy/network/clock_sweep.h"
#include "nnergy/network/memory_estimate.h"
#include "nnergy/network/network_prediction.h"
#include "nnergy/network/power_limit.h"

namespace nnergy::report {

/// NeuralPower's energy-precision ratio for the report (seed 004 Eq. 9).
struct EnergyPrecision {
  double error = 0;  ///< classification error, fraction
  double alpha = 0;
  double ratio_j = 0;  ///< M = error^alpha · energy per sample, J
};

/// Which model made which figure, when they differ (a learned time model with analytical power).
struct FigureSources {
  std::string time;   ///< e.g. "forest from cpu-forest.nnp"
  std::string power;  ///< e.g. "analytical (archline; cpu-forest.nnp has no power model)"
};

/// Everything a `predict` report shows.
struct PredictionReport {
  RunContext context;
  std::shared_ptr<const graph::Network> network;
  std::shared_ptr<const device::DeviceSpec> device;
  network::NetworkPrediction prediction;
  std::optional<network::ClockSweep> sweep;
  /// Predicted under a power limit: the clock the model found (prediction is at that clock).
  std::optional<network::PowerLimitedClock> power_limit;
  std::optional<EnergyPrecision> energy_precision;
  /// Absent: every figure comes from prediction.predictor_name. Energy is always time × power;
  /// the optimizer step of a training iteration is always analytical.
  std::optional<FigureSources> sources;
  std::vector<std::string> caveats;  ///< further notes from the predictor (extrapolation, ...)
  /// Estimated peak device memory of one iteration; absent: not estimated.
  std::optional<network::MemoryEstimate> memory;
  /// Warnings about the input (e.g. an export that folded BatchNorm), listed first in the notes.
  std::vector<std::string> warnings;
};

/// How the text report lists layers.
struct TextOptions {
  std::size_t top = 25;        ///< layers listed (0: all)
  bool sort_by_energy = true;  ///< else network order
};

/// Human-readable report: header, per-layer table (or clock sweep), totals, notes.
std::string render_text(const PredictionReport& report, const TextOptions& options);

/// JSON: {"context", "models" (which model made time, power, energy), "totals" (with 1σ
/// time_std_s, energy_std_j, edp_std_j_s; 0 = unknown; memory_peak_bytes, null when not
/// estimated), "memory" (the parts of the estimate, bytes; null when not estimated), "layers"
/// (every layer, energies summing to the total), "unique_operations", "unknown_ops", "notes",
/// "roofline" (the device's peak and attainable flop/s and bytes/s at the prediction's clock and
/// precision, and its archline ε_flop J/flop, ε_mem J/B, π0 W), ["clock_sweep" (with the
/// optima's confidence)], ["energy_precision"]}.
nlohmann::ordered_json to_json(const PredictionReport& report);

/// CSV with the context as leading "# key: value" lines (then "# memory_peak_bytes: N" and
/// "# memory: {JSON}" when memory was estimated); one row per layer, or per clock when
/// the report has a sweep. Columns carry their unit.
std::string render_csv(const PredictionReport& report);

}  // namespace nnergy::report
