#pragma once

// What the power-trace formats (power_trace_format.h) share when they read a file: its lines,
// the collection of samples per source with the checks every format makes (strictly increasing
// times, rows without a reading dropped and counted), and number parsing. Internal to measure/.

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "nnergy/measure/trace_file.h"

namespace nnergy::measure {

/// nnergy's CSV header (TraceCsvWriter).
inline constexpr std::array<std::string_view, 9> kCsvColumns = {
    "source",       "time_s",           "epoch_s",       "power_w",         "energy_j",
    "sm_clock_mhz", "memory_clock_mhz", "temperature_c", "throttle_reasons"};
/// The line that declares a source in nnergy's CSV.
inline constexpr std::string_view kSourcePrefix = "# source: ";
/// An nvidia-smi header, as messages show one.
inline constexpr std::string_view kNvidiaSmiExample =
    "timestamp, index, power.draw [W], clocks.current.sm [MHz]";

/// The shortest text that reads back as the same double (fmt's default for doubles).
std::string format_number(double value);
/// format_number of the value, or "" when absent.
std::string format_optional(const std::optional<double>& value);
/// A number cell: std::nullopt for text that is not a number; NaN for "nan" (callers treat it as
/// absent). from_chars rather than strtod: locale-independent.
std::optional<double> parse_number(std::string_view text);
/// Decimal or 0x-hex unsigned bits.
std::optional<std::uint64_t> parse_bits(std::string_view text);
/// "line 7", "lines 7, 9, 12, ..." for places that are all "line N"; other places (JSON paths)
/// are listed as they are. At most 10 are listed.
std::string place_list(const std::vector<std::string>& places);

/// One line of a text file.
struct Line {
  std::size_t number = 0;  ///< 1-based
  std::string_view text;   ///< without the line break and a trailing '\r'
};

/// The lines of a text file; `last_has_newline` false when the file ends inside its last line.
struct Lines {
  std::vector<Line> lines;
  bool last_has_newline = true;
};

/// The lines of `text`, which must outlive them.
Lines split_lines(const std::string& text);

/// The samples of a file per source, with the checks every format makes.
class TraceCollector {
 public:
  explicit TraceCollector(std::string file_label) : file_(std::move(file_label)) {}

  // Index of the trace for `info.id`, created on first use.
  std::size_t source(const SourceInfo& info) {
    const auto [it, inserted] = index_.emplace(info.id, traces_.size());
    if (inserted) {
      traces_.push_back({info, {}});
      last_time_.emplace_back();
    }
    return it->second;
  }
  bool has_source(const std::string& id) const { return index_.count(id) != 0; }
  std::size_t index_of(const std::string& id) const { return index_.at(id); }
  SourceInfo& info(std::size_t source) { return traces_[source].info; }

  // Adds a sample at `place` ("line 12", "sources[0].samples[3]"). Throws InvalidInput when its
  // time is not after the previous one of the same source; drops it (counted for a warning) when
  // it carries neither power nor energy.
  void add(std::size_t source, PowerSample sample, const std::string& place);

  void warn(std::string message) { messages_.push_back(std::move(message)); }

  // The traces with samples; throws InvalidInput when none has any.
  std::vector<PowerTrace> finish(TraceWarnings* warnings, const std::string& dropped_what);

 private:
  std::string file_;
  std::vector<PowerTrace> traces_;
  std::map<std::string, std::size_t> index_;
  std::vector<std::optional<std::pair<double, std::string>>> last_time_;
  std::vector<std::string> dropped_;
  std::vector<std::string> messages_;
};

}  // namespace nnergy::measure
