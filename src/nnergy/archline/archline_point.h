#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "nnergy/core/run_context.h"
#include "nnergy/device/precision.h"

namespace nnergy::archline {

/// The four microbenchmarks of seed 003 §3.3.
enum class BenchmarkKind {
  kBaseline,  ///< Alg. 1: index computation only, W = Q = 0
  kCopy,      ///< Alg. 2: one load and one store per thread, W = 0 (Eq. 11)
  kFlop,      ///< Alg. 3: N fused multiply-adds per thread, Q = 0 (Eq. 12)
  kRoofline,  ///< Alg. 4: one load, N multiply-adds, one store per thread
};

/// "baseline", "copy", "flop", "roofline".
std::string_view to_string(BenchmarkKind kind);
/// Parses the names above; throws InvalidInput naming `where` otherwise.
BenchmarkKind parse_benchmark_kind(std::string_view name, const std::string& where);

/// One measured (or synthesized) benchmark run: a batch of kernel launches lasting seconds.
struct ArchlinePoint {
  BenchmarkKind benchmark = BenchmarkKind::kRoofline;
  device::Precision precision = device::Precision::kFp32;
  double occupancy = 1;                    ///< launched threads / resident-thread capacity, (0, 1]
  double flop_count = 0;                   ///< W, flop, over the whole batch
  double byte_count = 0;                   ///< Q, DRAM bytes, over the whole batch
  double time_s = 0;                       ///< T, s, between the CUDA events around the batch
  double energy_j = 0;                     ///< E, J, over the batch
  double power_mean_w = 0;                 ///< E/T, W
  std::optional<double> sm_clock_mhz;      ///< dominant SM clock during the batch
  std::optional<double> memory_clock_mhz;  ///< dominant memory clock during the batch
  std::uint64_t throttle_reasons = 0;      ///< OR of the NVML clock-event reasons seen
  /// False when the point was taken at another clock than the reference (boost) clock or while
  /// throttled: excluded from the fit (seed 003 §3.1.2), kept for R²* (Table 4).
  bool admitted = true;

  /// W/Q, flop/B; +inf when Q = 0.
  double intensity_flop_per_byte() const;
};

/// A set of points with the "# key: value" context block of the file they came from.
struct ArchlineDataSet {
  std::vector<std::pair<std::string, std::string>> context;  ///< in file order
  std::vector<ArchlinePoint> points;

  /// The context value of `key`, if present.
  std::optional<std::string> context_value(const std::string& key) const;
  /// "synthetic" when the file says its points were generated (`kind` mentions synthetic, as
  /// `nnergy archline synth` writes), else "measured"; outputs label the points with it.
  std::string points_origin() const;
};

/// The CSV header line (without newline) written by `to_csv`; see docs/archline.md.
std::string archline_csv_header();
/// The points as CSV rows under `archline_csv_header()`, after the context block as "# k: v" lines.
std::string to_csv(const std::vector<ArchlinePoint>& points, const RunContext& context);
/// Parses an archline CSV. Required columns: benchmark, precision, flop_count, byte_count (`bytes`
/// in files written before the name), time_s, energy_j; the others are optional. Throws
/// InvalidInput naming `source`, the line and the column for a missing column, a malformed number,
/// a negative W or Q, a non-positive T or E, or W/Q that the benchmark kind cannot have (a roofline
/// point needs W > 0 and Q > 0).
ArchlineDataSet parse_archline_csv(const std::string& text, const std::string& source);
/// Reads and parses `path`; InvalidInput when it cannot be opened.
ArchlineDataSet read_archline_csv(const std::filesystem::path& path);

}  // namespace nnergy::archline
