#pragma once

// The result of `nnergy compare MODEL --serve` (api/compare_serve.h): deployments of a language
// model ranked by energy per output token, and its text, JSON and CSV.

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "nnergy/core/run_context.h"
#include "nnergy/serve/serving_run.h"

namespace nnergy::report {

/// One deployment of the comparison.
struct ServeCandidate {
  std::string device;  ///< catalog id
  std::string device_name;
  int gpus = 0;
  bool runs = false;   ///< false: refused (see `reason`)
  std::string reason;  ///< why it does not run or misses the target
  bool meets_target = false;
  int tp = 0;
  double batch = 0;       ///< running sequences per replica (the largest within the target)
  std::string precision;  ///< weight format, with "weight-only" where the math is 16-bit
  serve::ServeResult result;
  std::optional<double> usd_per_million_tokens;
  std::optional<double> gco2e_per_million_tokens;
  int rank = 0;  ///< by energy per output token among those meeting the target (1 = best)
};

struct ServeComparison {
  RunContext context;
  std::string model;
  double input_tokens = 0;
  double output_tokens = 0;
  std::optional<double> max_itl_s;
  std::optional<double> max_ttft_s;
  std::string power_scope;
  std::vector<ServeCandidate> candidates;  ///< ranked first, then the rest in catalog order
  std::string method;                      ///< how the figures were obtained (serve's)
  std::vector<std::string> notes;
};

/// A ranking table (rank, device, GPUs, tp, batch, J/token, tokens/s, ITL, TTFT, power, $ and
/// gCO2e per million tokens where asked), the deployments that do not run or miss the target
/// with the reason, and the notes.
std::string render_text(const ServeComparison& comparison);
/// {context, model, workload, targets, rows: [...], method, notes}; each row's figures are
/// serve's totals keys (energy_per_output_token_j, output_tokens_per_s, ...).
nlohmann::ordered_json to_json(const ServeComparison& comparison);
/// One row per deployment, context as leading # lines.
std::string render_csv(const ServeComparison& comparison);

}  // namespace nnergy::report
