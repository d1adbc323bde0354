#pragma once

// The result of `nnergy serve` and its renderers (text, JSON, CSV; the HTML report draws the
// JSON document).

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "nnergy/core/run_context.h"
#include "nnergy/llm/architecture.h"
#include "nnergy/serve/serving_run.h"

namespace nnergy::report {

/// One point of a batch or clock sweep.
struct ServeSweepPoint {
  double batch = 0;
  double clock_mhz = 0;
  bool fits = true;  ///< the batch fits the memory (false: not predicted)
  serve::ServeResult result;
};

/// Everything a `serve` report shows.
struct ServeReport {
  RunContext context;
  llm::Architecture model;
  llm::ParameterCount parameters;
  std::string device_id;
  std::string device_name;
  double device_memory_gib = 0;
  std::string engine_id;
  std::string engine_release;
  std::string engine_calibration;  ///< empty: the engine's documented defaults and estimates
  int gpus = 1;
  int tp = 1;
  int pp = 1;
  int ep = 1;
  int replicas = 1;
  std::string precision;  ///< weight format
  std::string math;       ///< the units of the matrix products (fp8, bf16, ...)
  bool weight_only = false;
  std::string kv_precision;
  double clock_mhz = 0;
  std::string power_scope = "gpu";
  /// Node scope only: the host's power per GPU added to the GPUs' (W) and how it was obtained.
  double host_power_per_gpu_w = 0;
  serve::Workload workload = serve::Workload::kServing;
  double input_tokens = 0;
  double output_tokens = 0;
  double weights_bytes_per_gpu = 0;
  double kv_budget_bytes_per_gpu = 0;
  serve::ServeResult result;
  std::vector<ServeSweepPoint> batch_sweep;
  std::vector<ServeSweepPoint> clock_sweep;
  std::optional<std::size_t> energy_optimal_clock;  ///< index into clock_sweep
  /// How the figures were obtained (model, calibration, its out-of-sample accuracy).
  std::string method;
  std::vector<std::string> notes;
};

/// Human-readable report: header, totals, energy by phase and part, sweeps, notes; with
/// `layers`, the operations of a representative decode step.
std::string render_text(const ServeReport& report, bool layers);

/// JSON: {"context", "model" (id, model_type, parameters, published counts), "deployment",
/// "workload", "totals" (energy_per_output_token_j, output_tokens_per_s,
/// output_tokens_per_s_per_gpu, time_per_output_token_s, ttft_s, request_latency_s,
/// energy_per_request_j, avg_power_w (all GPUs), avg_power_per_gpu_w, batch), "phases"
/// (prefill and decode energy per request, J), "parts" (energy per request by part, J),
/// "memory", "operations" (when asked), "batch_sweep", "clock_sweep", "method", "notes"}.
nlohmann::ordered_json to_json(const ServeReport& report);
/// The `totals` object of the JSON: batch, energy_per_output_token_j, output_tokens_per_s,
/// output_tokens_per_s_per_gpu, time_per_output_token_s, ttft_s, request_latency_s,
/// energy_per_request_j, avg_power_w, avg_power_per_gpu_w.
nlohmann::ordered_json totals_json(const serve::ServeResult& result);

/// CSV: the context as "# key: value" lines, then one row per sweep point (batch or clock),
/// or one row of totals; columns carry their units.
std::string render_csv(const ServeReport& report);

/// One row per catalog model for `nnergy serve --list-models`.
struct ModelListing {
  std::string id;
  std::string family;
  std::string model_type;
  double total_b = 0;  ///< computed from the configuration
  double active_b = 0;
  std::optional<double> published_total_b;
  std::optional<double> published_active_b;
  std::int64_t context = 0;
  std::string weight_format;
  std::string layers;  ///< e.g. "32 × attention + gated MLP"
};
std::string render_text(const std::vector<ModelListing>& models);
nlohmann::ordered_json to_json(const std::vector<ModelListing>& models);

}  // namespace nnergy::report
