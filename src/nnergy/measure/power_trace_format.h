#pragma once

// The power-trace formats read_trace_text tells apart by content (core/registry.h's shape):
// nnergy's JSON and CSV traces and nvidia-smi --format=csv logs, one file each. Internal to
// measure/.

#include <fmt/format.h>

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "nnergy/core/csv.h"
#include "nnergy/core/error.h"
#include "nnergy/core/registry.h"
#include "nnergy/core/text.h"
#include "nnergy/measure/trace_file.h"
#include "nnergy/measure/trace_reading.h"

namespace nnergy::measure {

/// A power-trace file as the formats look at it: its text and label and, unless it is JSON, its
/// lines and the first one that is neither blank nor a '#' comment (its header).
struct TraceText {
  const std::string& text;
  const std::string& label;      ///< names the file in messages
  bool json = false;             ///< the first character that is not white space is '{'
  Lines lines;                   ///< empty for JSON
  std::size_t header_index = 0;  ///< into lines (not for JSON)

  const Line& header() const { return lines.lines.at(header_index); }
};

/// The TraceText of `text` (both arguments must outlive it). Throws InvalidInput naming
/// `file_label` for a file with nothing but white space, or no header after its comment lines.
TraceText trace_text(const std::string& text, const std::string& file_label);

/// The data lines after the header of `file` (not JSON): skips blank and '#' lines, drops a
/// truncated last line (fewer fields and no newline at the end of the file, as left by a logger
/// killed mid-write) with a warning, and rejects other lines whose field count differs from the
/// header's. Calls `handle(line, cells)` for each.
template <typename RowHandler>
void for_each_row(const TraceText& file, TraceCollector& collector, RowHandler&& handle) {
  const Lines& lines = file.lines;
  const Line& header = file.header();
  const std::size_t field_count = csv::split_line(header.text).size();
  for (std::size_t i = file.header_index + 1; i < lines.lines.size(); ++i) {
    const Line& line = lines.lines[i];
    if (trim(line.text).empty() || line.text.front() == '#') continue;
    std::vector<std::string> fields = csv::split_line(line.text);
    if (fields.size() != field_count) {
      const bool last = i + 1 == lines.lines.size();
      if (last && !lines.last_has_newline && fields.size() < field_count) {
        collector.warn(fmt::format(
            "{}: line {}: truncated last line dropped ({} of {} fields, no newline at the end)",
            file.label, line.number, fields.size(), field_count));
        continue;
      }
      throw InvalidInput(fmt::format(
          "{}: line {}: expected {} comma-separated fields as in the header (line {}), found {}",
          file.label, line.number, field_count, header.number, fields.size()));
    }
    handle(line, fields);
  }
}

/// One format of power traces.
class PowerTraceFormat {
 public:
  virtual ~PowerTraceFormat() = default;
  /// "nnergy-json", "nnergy-csv", "nvidia-smi".
  virtual std::string name() const = 0;
  /// True when `file` is in this format. Throws InvalidInput when it is, but malformed in a way
  /// only its recognition sees (an nvidia-smi column with another unit).
  virtual bool recognizes(const TraceText& file) const = 0;
  /// The traces of a file this format recognized; throws InvalidInput naming the file and line
  /// (or JSON path) of what is malformed, reports dropped rows in `warnings` (may be null).
  virtual std::vector<PowerTrace> read(const TraceText& file, TraceWarnings* warnings) const = 0;
};

/// The formats, tried in registration order.
class PowerTraceFormats : public Registry<std::unique_ptr<PowerTraceFormat>> {
 public:
  PowerTraceFormats() : Registry("power trace format") {}
  /// Adds `format` under its name(); throws InternalError for a duplicate.
  void add(std::unique_ptr<PowerTraceFormat> format, std::string summary);
};

/// nnergy-json, nnergy-csv and nvidia-smi, in that order. Thread-safe.
const PowerTraceFormats& standard_power_trace_formats();

std::unique_ptr<PowerTraceFormat> make_nnergy_json_format();
std::unique_ptr<PowerTraceFormat> make_nnergy_csv_format();
std::unique_ptr<PowerTraceFormat> make_nvidia_smi_format();

}  // namespace nnergy::measure
