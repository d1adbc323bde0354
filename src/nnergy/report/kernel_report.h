#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "nnergy/core/run_context.h"
#include "nnergy/kernel/gemm_model.h"

namespace nnergy::report {

/// The result of `nnergy kernel gemm`.
struct KernelReport {
  RunContext context;
  std::string kernel;       ///< "gemm", "attention"
  std::string description;  ///< "8192 x 16384 x 16384 bf16 GEMM"
  std::string device_id;
  std::string device_name;
  std::string engine;
  std::string format;
  /// The kernel's dimensions by name ("m", "n", "k", "batch"; "batch", "queries", "keys", ...).
  std::vector<std::pair<std::string, double>> shape;
  /// What the tile line's two sizes are ("rows x columns of C"; "query rows x keys per block");
  /// empty: no tile line (a collective; a MoE layer's tiles differ by expert).
  std::string tile_meaning = "rows x columns of C";
  double peak_flop_per_s = 0;  ///< the format's units' peak at boost; 0 for a collective
  double boost_mhz = 0;
  double power_limit_w = 0;
  int sm_count = 0;
  kernel::KernelEstimate estimate;
  std::vector<std::string> notes;  ///< how it was obtained, assumptions
};

/// Text: time, achieved rates, the bound, tiles and waves, board power and energy, each with
/// its ±1σ, then the notes.
std::string render_text(const KernelReport& report);

/// JSON: {"context", "kernel", "device", "engine", "format", "shape", "totals" {"time_s",
/// "time_std_s", "avg_power_w", "avg_power_std_w", "energy_j", "energy_std_j"}, "achieved"
/// {"tflop_per_s", "gb_per_s", "peak_share"}, "bound", "tiles" {...}, "clock_mhz", "notes"}.
nlohmann::ordered_json to_json(const KernelReport& report);

}  // namespace nnergy::report
