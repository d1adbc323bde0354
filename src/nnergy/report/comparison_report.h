#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "nnergy/core/run_context.h"

namespace nnergy::report {

/// One device of a comparison, with where its model parameters come from.
struct ComparedDevice {
  std::string id;                ///< catalog id, e.g. "h100-sxm"
  std::string name;              ///< e.g. "NVIDIA H100 SXM5 80GB"
  std::string generation;        ///< e.g. "Hopper"
  std::string time_model;        ///< "calibrated", "transferred" or "estimated"
  std::string provenance;        ///< the calibration's sentence, or why the figures are estimates
  std::string power_model;       ///< "measured" (published archline fit) or "estimated"
  std::string power_provenance;  ///< the archline parameters' source
  double memory_bytes = 0;       ///< device memory, bytes
  double relative_time_std = 0;  ///< 1σ of whole-network times, relative; 0: unknown
  /// Largest batch whose estimated memory fits, per compared batch's estimate; absent: unknown.
  std::optional<std::int64_t> largest_fitting_batch;
};

/// One device at one batch and one clock.
struct ComparisonRow {
  std::string device;  ///< ComparedDevice::id
  std::int64_t batch = 0;
  bool energy_optimal_clock = false;  ///< else the boost clock
  double clock_mhz = 0;
  /// The estimated peak memory fits the device's, or exceeds it by less than the estimate's
  /// uncertainty (then `may_not_fit`; ranked, as predict warns and does not refuse).
  bool fits_memory = true;
  bool may_not_fit = false;  ///< over the device's memory, within the estimate's uncertainty
  double memory_peak_bytes = 0;
  /// The host issues kernels more slowly than the GPU runs them: the iteration time is the
  /// host's (totals host_launch_s > gpu_time_s at this clock).
  bool host_bound = false;
  double time_s = 0;  ///< per iteration; ± *_std are 1σ model uncertainties (0: unknown)
  double time_std_s = 0;
  double energy_j = 0;
  double energy_std_j = 0;
  double power_w = 0;  ///< average board power, W
  double edp_j_s = 0;  ///< energy-delay product of an iteration, J·s
  double edp_std_j_s = 0;
  /// On the Pareto front of time per sample and energy per sample among the rows of its batch
  /// that fit in memory: no other row is at least as fast and as frugal and better in one.
  bool pareto = false;
  /// 1-based ranks among the rows of the same batch and clock kind that fit in memory (0: not
  /// ranked): by time per sample, energy per sample, EDP and average power, lowest first.
  int rank_time = 0;
  int rank_energy = 0;
  int rank_edp = 0;
  int rank_power = 0;

  double time_per_sample_s() const { return time_s / static_cast<double>(batch); }
  double energy_per_sample_j() const { return energy_j / static_cast<double>(batch); }
};

/// What `nnergy compare` shows: one network on several devices, each at its boost clock and at
/// its own energy-optimal clock, at one or more batches.
struct ComparisonReport {
  RunContext context;
  std::string network;  ///< the network's name
  std::string mode;     ///< "inference" or "training"
  std::string precision;
  std::vector<std::int64_t> batches;
  std::vector<ComparedDevice> devices;  ///< in the order they were asked for
  std::vector<ComparisonRow> rows;      ///< per batch, per device: boost then energy-optimal
  std::vector<std::string> notes;       ///< how the figures were obtained; devices skipped
};

/// Marks each row's Pareto membership and ranks (the fields above) from its figures.
void rank_rows(std::vector<ComparisonRow>& rows);

/// Text: per batch, the devices ranked by energy per sample at their boost clock, with their
/// energy-optimal clock beside; then the memory limits, the provenance of each device's figures
/// and the notes.
std::string render_text(const ComparisonReport& report);

/// JSON: {"context", "network", "mode", "precision", "batches", "devices", "rows" (with
/// time_per_sample_s, energy_per_sample_j, energy_per_sample_std_j), "notes"}.
nlohmann::ordered_json to_json(const ComparisonReport& report);

/// CSV: the context block as "# key: value" lines, then one row per ComparisonRow with its
/// device's provenance. Columns carry their unit.
std::string render_csv(const ComparisonReport& report);

}  // namespace nnergy::report
