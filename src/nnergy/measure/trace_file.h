#pragma once

#include <filesystem>
#include <ostream>
#include <string>
#include <vector>

#include "nnergy/measure/power_sample.h"

namespace nnergy::measure {

/// A recorded power trace of one source.
struct PowerTrace {
  SourceInfo info;
  std::vector<PowerSample> samples;  ///< strictly increasing time_s
};

/// Rows a reader dropped, with why; a usable file still loads.
struct TraceWarnings {
  /// e.g. "run.csv: 3 rows with empty, N/A or NaN power dropped (lines 7, 9, 12)"
  std::vector<std::string> messages;
};

/// Reads a power trace file: nnergy's CSV (columns below) or JSON (see `trace_json`), or an
/// nvidia-smi `--query-gpu=... --format=csv` log (local-time "%Y/%m/%d %H:%M:%S.%f" timestamps; one
/// trace per GPU index). Throws InvalidInput naming the file and line for a bad header,
/// non-monotonic or duplicated timestamps, or unknown units; drops rows with NaN/empty power and a
/// truncated last line, reporting them in `warnings` (may be null).
///
/// The format is told by the content: '{' first is JSON, a header equal to nnergy's is nnergy CSV,
/// a header of nvidia-smi field names is an nvidia-smi log.
///
/// nnergy files: a row is dropped when it has neither power_w nor energy_j (an energy counter's
/// first sample carries no power and is kept). Every row must name a source declared by a
/// "# source:" line. Sources left without samples are omitted with a warning.
///
/// nvidia-smi logs: recognised columns are timestamp, index, name, uuid, driver_version,
/// power.draw.instant / power.draw.average / power.draw [W] (the first of these present is the
/// power; power.draw is marked averaged because it is a 1 s average on Ampere and newer and the
/// log does not tell the architecture), power.limit or enforced.power.limit [W],
/// clocks.sm / clocks.current.sm, clocks.gr / clocks.current.graphics (used as the SM clock when
/// there is no SM column), clocks.mem / clocks.current.memory [MHz], temperature.gpu, and
/// clocks_event_reasons.active / clocks_throttle_reasons.active (hex bits). Other columns are
/// ignored. Values may carry their unit ("145.99 W") or not (`--format=csv,nounits`); "[N/A]"
/// and other bracketed values are absent. Timestamps are local time, converted with mktime in
/// the reading process's time zone (TZ); time_s counts from the file's first row. Sources are
/// "nvidia-smi:INDEX" (kind "gpu"), or "nvidia-smi:0" without an index column.
///
/// Thread-safe: no shared state beyond the process's time zone, which mktime reads.
std::vector<PowerTrace> read_trace_file(const std::filesystem::path& path, TraceWarnings* warnings);

/// `read_trace_file` on text already in memory; `file_label` names it in messages.
std::vector<PowerTrace> read_trace_text(const std::string& text, const std::string& file_label,
                                        TraceWarnings* warnings);

/// nnergy's CSV trace: "# key: value" context lines, then the header
/// `source,time_s,epoch_s,power_w,energy_j,sm_clock_mhz,memory_clock_mhz,temperature_c,throttle_reasons`
/// and one row per sample (empty cells for absent values). Sources are described by
/// "# source: <id>|<kind>|<name>|<uuid>|<driver>|<power_limit_w>|<has_energy_counter>|"
/// "<power_is_averaged>|<has_power>" lines (one line in the file) before the header (booleans
/// "true"/"false", empty for SourceInfo's default; '|', '\\' and line breaks in a field are
/// backslash-escaped; readers accept the line without the trailing has_power, meaning true).
/// Numbers are written in the shortest form that reads back to the same double; a `source` cell
/// with a comma or quote is quoted as in RFC 4180.
class TraceCsvWriter {
 public:
  /// Writes the context lines and the source lines and the header to `out`.
  TraceCsvWriter(std::ostream& out, const std::string& context_comments,
                 const std::vector<SourceInfo>& sources);
  /// Appends one row; `source` indexes the constructor's `sources`. Not thread-safe.
  void write(std::size_t source, const PowerSample& sample);

 private:
  std::ostream& out_;
  std::vector<std::string> ids_;
};

/// nnergy's JSON trace:
/// {"context": {...}, "sources": [{"info": {"id", "kind", "name", "uuid", "driver_version",
/// "power_limit_w", "has_energy_counter", "has_power", "power_is_averaged"}, "samples": [{"time_s",
/// "epoch_s", "power_w", "energy_j", "sm_clock_mhz", "memory_clock_mhz", "temperature_c",
/// "throttle_reasons"}, ...]}, ...]}; absent values are null, numbers round-trip exactly.
/// `context_json` is the text of a JSON object (e.g. RunContext::to_json().dump()), or empty for
/// {}. Throws InternalError when it is not a JSON object. Thread-safe.
std::string trace_json(const std::string& context_json, const std::vector<PowerTrace>& traces);

/// Writes `traces` as nnergy CSV through a TraceCsvWriter, trace after trace.
void write_trace_csv(std::ostream& out, const std::string& context_comments,
                     const std::vector<PowerTrace>& traces);

}  // namespace nnergy::measure
