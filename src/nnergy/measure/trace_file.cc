#include "nnergy/measure/trace_file.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <ctime>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string_view>
#include <system_error>
#include <utility>

#include "nnergy/core/csv.h"
#include "nnergy/core/error.h"
#include "nnergy/core/text.h"

namespace nnergy::measure {

namespace {

using nlohmann::json;
using nlohmann::ordered_json;

constexpr std::array<std::string_view, 9> kCsvColumns = {
    "source",       "time_s",           "epoch_s",       "power_w",         "energy_j",
    "sm_clock_mhz", "memory_clock_mhz", "temperature_c", "throttle_reasons"};
constexpr std::string_view kSourcePrefix = "# source: ";
constexpr std::string_view kNvidiaSmiExample =
    "timestamp, index, power.draw [W], clocks.current.sm [MHz]";
// Line numbers listed in a warning before it says "...".
constexpr std::size_t kListedLines = 10;

// ---------------------------------------------------------------------------------------------
// Text helpers

std::string escape_source_field(const std::string& field) {
  std::string escaped;
  for (char c : field) {
    if (c == '\\' || c == '|') {
      escaped += '\\';
      escaped += c;
    } else if (c == '\n') {
      escaped += "\\n";
    } else if (c == '\r') {
      escaped += "\\r";
    } else {
      escaped += c;
    }
  }
  return escaped;
}

// Splits a "# source:" line body at unescaped '|' and undoes escape_source_field.
std::vector<std::string> split_source_fields(std::string_view body) {
  std::vector<std::string> fields(1);
  for (std::size_t i = 0; i < body.size(); ++i) {
    const char c = body[i];
    if (c == '\\' && i + 1 < body.size()) {
      const char next = body[++i];
      fields.back() += next == 'n' ? '\n' : next == 'r' ? '\r' : next;
    } else if (c == '|') {
      fields.emplace_back();
    } else {
      fields.back() += c;
    }
  }
  return fields;
}

// The shortest text that reads back as the same double (fmt's default for doubles).
std::string format_number(double value) { return fmt::format("{}", value); }

std::string format_optional(const std::optional<double>& value) {
  return value ? format_number(*value) : std::string();
}

// A number cell: std::nullopt for text that is not a number; NaN for "nan" (callers treat it as
// absent). from_chars rather than strtod: locale-independent.
std::optional<double> parse_number(std::string_view text) {
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

// Decimal or 0x-hex unsigned bits.
std::optional<std::uint64_t> parse_bits(std::string_view text) {
  const bool hex = text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X');
  if (hex) text.remove_prefix(2);
  std::uint64_t value = 0;
  const auto [end, ec] =
      std::from_chars(text.data(), text.data() + text.size(), value, hex ? 16 : 10);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

// "line 7", "lines 7, 9, 12, ..." for places that are all "line N"; other places (JSON paths)
// are listed as they are. At most kListedLines are listed.
std::string place_list(const std::vector<std::string>& places) {
  constexpr std::string_view kLine = "line ";
  const bool all_lines = std::all_of(places.begin(), places.end(),
                                     [&](const std::string& p) { return p.rfind(kLine, 0) == 0; });
  std::string list = all_lines ? (places.size() == 1 ? "line " : "lines ") : "";
  for (std::size_t i = 0; i < places.size() && i < kListedLines; ++i) {
    if (i != 0) list += ", ";
    list += all_lines ? places[i].substr(kLine.size()) : places[i];
  }
  if (places.size() > kListedLines) list += ", ...";
  return list;
}

// ---------------------------------------------------------------------------------------------
// Lines of a text file

struct Line {
  std::size_t number = 0;  // 1-based
  std::string_view text;   // without the line break and a trailing '\r'
};

struct Lines {
  std::vector<Line> lines;
  bool last_has_newline = true;
};

Lines split_lines(const std::string& text) {
  Lines result;
  std::size_t begin = 0;
  std::size_t number = 1;
  while (begin < text.size()) {
    const auto end = text.find('\n', begin);
    std::string_view line(text.data() + begin,
                          (end == std::string::npos ? text.size() : end) - begin);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    result.lines.push_back({number++, line});
    if (end == std::string::npos) {
      result.last_has_newline = false;
      break;
    }
    begin = end + 1;
  }
  return result;
}

// ---------------------------------------------------------------------------------------------
// Collecting samples per source, with the checks every format shares

class TraceCollector {
 public:
  explicit TraceCollector(std::string file_label) : file_(std::move(file_label)) {}

  const std::string& file() const { return file_; }

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
  void add(std::size_t source, PowerSample sample, const std::string& place) {
    auto& last = last_time_[source];
    if (last && !(sample.time_s > last->first)) {
      const bool equal = sample.time_s == last->first;
      throw InvalidInput(fmt::format(
          "{}: {}: {} timestamp of source '{}' ({} s): expected a time after the previous "
          "sample's at {} ({} s); traces need strictly increasing timestamps",
          file_, place, equal ? "duplicated" : "non-monotonic", traces_[source].info.id,
          format_number(sample.time_s), last->second, format_number(last->first)));
    }
    last = std::make_pair(sample.time_s, place);
    if (sample.power_w && std::isnan(*sample.power_w)) sample.power_w.reset();
    if (sample.energy_j && std::isnan(*sample.energy_j)) sample.energy_j.reset();
    if (!sample.power_w && !sample.energy_j) {
      dropped_.push_back(place);
      return;
    }
    traces_[source].samples.push_back(std::move(sample));
  }

  void warn(std::string message) { messages_.push_back(std::move(message)); }

  // The traces with samples; throws InvalidInput when none has any.
  std::vector<PowerTrace> finish(TraceWarnings* warnings, const std::string& dropped_what) {
    if (!dropped_.empty()) {
      messages_.insert(
          messages_.begin(),
          fmt::format("{}: {} row{} with {} dropped ({})", file_, dropped_.size(),
                      dropped_.size() == 1 ? "" : "s", dropped_what, place_list(dropped_)));
    }
    std::vector<PowerTrace> usable;
    for (PowerTrace& trace : traces_) {
      if (trace.samples.empty()) {
        messages_.push_back(fmt::format("{}: source '{}' has no usable samples and is omitted",
                                        file_, trace.info.id));
      } else {
        usable.push_back(std::move(trace));
      }
    }
    if (usable.empty()) {
      std::string why;
      for (const std::string& m : messages_) why += (why.empty() ? " (" : "; ") + m;
      if (!why.empty()) why += ")";
      throw InvalidInput(file_ +
                         ": no usable samples: expected at least one row with a power or "
                         "energy reading" +
                         why);
    }
    if (warnings != nullptr) {
      for (std::string& m : messages_) warnings->messages.push_back(std::move(m));
    }
    return usable;
  }

 private:
  std::string file_;
  std::vector<PowerTrace> traces_;
  std::map<std::string, std::size_t> index_;
  std::vector<std::optional<std::pair<double, std::string>>> last_time_;
  std::vector<std::string> dropped_;
  std::vector<std::string> messages_;
};

// Data lines after the header: skips blank and '#' lines, drops a truncated last line (fewer
// fields and no newline at the end of the file, as left by a logger killed mid-write) with a
// warning, and rejects other lines whose field count differs from the header's.
template <typename RowHandler>
void for_each_row(const Lines& lines, std::size_t first, const Line& header,
                  std::size_t field_count, TraceCollector& collector, RowHandler&& handle) {
  for (std::size_t i = first; i < lines.lines.size(); ++i) {
    const Line& line = lines.lines[i];
    if (trim(line.text).empty() || line.text.front() == '#') continue;
    std::vector<std::string> fields = csv::split_line(line.text);
    if (fields.size() != field_count) {
      const bool last = i + 1 == lines.lines.size();
      if (last && !lines.last_has_newline && fields.size() < field_count) {
        collector.warn(fmt::format(
            "{}: line {}: truncated last line dropped ({} of {} fields, no newline at the end)",
            collector.file(), line.number, fields.size(), field_count));
        continue;
      }
      throw InvalidInput(fmt::format(
          "{}: line {}: expected {} comma-separated fields as in the header (line {}), found {}",
          collector.file(), line.number, field_count, header.number, fields.size()));
    }
    handle(line, fields);
  }
}

[[noreturn]] void bad_header(const std::string& file, const Line& line) {
  std::string columns;
  for (std::string_view c : kCsvColumns) columns += (columns.empty() ? "" : ",") + std::string(c);
  throw InvalidInput(fmt::format(
      "{}: line {}: expected a header: nnergy's '{}' or an nvidia-smi --query-gpu=... "
      "--format=csv header such as '{}' (logs written with 'noheader' cannot be read); found '{}'",
      file, line.number, columns, kNvidiaSmiExample, line.text));
}

// ---------------------------------------------------------------------------------------------
// nnergy CSV

bool parse_bool(std::string_view text, bool* value) {
  if (text == "true" || text == "1") {
    *value = true;
  } else if (text == "false" || text == "0") {
    *value = false;
  } else {
    return false;
  }
  return true;
}

SourceInfo parse_source_line(const std::string& file, const Line& line) {
  const std::vector<std::string> f = split_source_fields(line.text.substr(kSourcePrefix.size()));
  const std::string expected =
      "expected '# source: id|kind|name|uuid|driver|power_limit_w|has_energy_counter|"
      "power_is_averaged[|has_power]'";
  if (f.size() != 8 && f.size() != 9) {
    throw InvalidInput(fmt::format("{}: line {}: {} (8 or 9 fields), found {} fields", file,
                                   line.number, expected, f.size()));
  }
  SourceInfo info;
  info.id = f[0];
  info.kind = f[1];
  info.name = f[2];
  info.uuid = f[3];
  info.driver_version = f[4];
  if (info.id.empty()) {
    throw InvalidInput(
        fmt::format("{}: line {}: {}, found an empty id", file, line.number, expected));
  }
  if (!f[5].empty()) {
    const std::optional<double> limit = parse_number(f[5]);
    if (!limit) {
      throw InvalidInput(
          fmt::format("{}: line {}: power_limit_w: expected a number in W or "
                      "nothing, found '{}'",
                      file, line.number, f[5]));
    }
    info.power_limit_w = limit;
  }
  const std::pair<const char*, bool*> flags[] = {{"has_energy_counter", &info.has_energy_counter},
                                                 {"power_is_averaged", &info.power_is_averaged},
                                                 {"has_power", &info.has_power}};
  // An empty flag keeps SourceInfo's default, which makes hand-written source lines short.
  for (std::size_t k = 0; k < 3 && 6 + k < f.size(); ++k) {
    if (!f[6 + k].empty() && !parse_bool(f[6 + k], flags[k].second)) {
      throw InvalidInput(fmt::format("{}: line {}: {}: expected true or false, found '{}'", file,
                                     line.number, flags[k].first, f[6 + k]));
    }
  }
  return info;
}

std::optional<double> optional_cell(const std::string& file, const Line& line,
                                    std::string_view column, const std::string& cell,
                                    std::string_view unit) {
  if (cell.empty()) return std::nullopt;
  const std::optional<double> value = parse_number(cell);
  if (!value) {
    throw InvalidInput(
        fmt::format("{}: line {}: column {}: expected a number in {} or nothing, "
                    "found '{}'",
                    file, line.number, column, unit, cell));
  }
  if (std::isnan(*value)) return std::nullopt;
  return value;
}

std::vector<PowerTrace> read_nnergy_csv(const Lines& lines, std::size_t header_index,
                                        TraceCollector& collector, TraceWarnings* warnings) {
  const std::string& file = collector.file();
  for (std::size_t i = 0; i < header_index; ++i) {
    const Line& line = lines.lines[i];
    if (line.text.substr(0, kSourcePrefix.size()) != kSourcePrefix) continue;
    const SourceInfo info = parse_source_line(file, line);
    if (collector.has_source(info.id)) {
      throw InvalidInput(
          fmt::format("{}: line {}: source '{}' is declared twice", file, line.number, info.id));
    }
    collector.source(info);
  }
  const Line& header = lines.lines[header_index];
  for_each_row(
      lines, header_index + 1, header, kCsvColumns.size(), collector,
      [&](const Line& line, const std::vector<std::string>& cells) {
        if (!collector.has_source(cells[0])) {
          throw InvalidInput(fmt::format(
              "{}: line {}: source '{}' is not declared by a '# source:' line before the "
              "header",
              file, line.number, cells[0]));
        }
        PowerSample s;
        const std::optional<double> time = parse_number(cells[1]);
        if (!time || !std::isfinite(*time)) {
          throw InvalidInput(
              fmt::format("{}: line {}: column time_s: expected a number in s, found '{}'", file,
                          line.number, cells[1]));
        }
        s.time_s = *time;
        s.epoch_s = optional_cell(file, line, "epoch_s", cells[2], "s").value_or(0.0);
        s.power_w = optional_cell(file, line, "power_w", cells[3], "W");
        s.energy_j = optional_cell(file, line, "energy_j", cells[4], "J");
        s.sm_clock_mhz = optional_cell(file, line, "sm_clock_mhz", cells[5], "MHz");
        s.memory_clock_mhz = optional_cell(file, line, "memory_clock_mhz", cells[6], "MHz");
        s.temperature_c = optional_cell(file, line, "temperature_c", cells[7], "°C");
        if (!cells[8].empty()) {
          const std::optional<std::uint64_t> bits = parse_bits(cells[8]);
          if (!bits) {
            throw InvalidInput(
                fmt::format("{}: line {}: column throttle_reasons: expected an unsigned integer "
                            "(decimal or 0x-hex) or nothing, found '{}'",
                            file, line.number, cells[8]));
          }
          s.throttle_reasons = *bits;
        }
        collector.add(collector.index_of(cells[0]), s, fmt::format("line {}", line.number));
      });
  return collector.finish(warnings, "neither power nor energy");
}

// ---------------------------------------------------------------------------------------------
// nvidia-smi CSV logs

enum class SmiField {
  kTimestamp,
  kIndex,
  kName,
  kUuid,
  kDriver,
  kPowerDraw,
  kPowerInstant,
  kPowerAverage,
  kPowerLimit,
  kSmClock,
  kGraphicsClock,
  kMemoryClock,
  kTemperature,
  kThrottle,
};

struct SmiFieldSpec {
  std::string_view name;
  SmiField field;
  std::string_view unit;  // the bracketed unit nvidia-smi prints in the header; "" for none
};

// --query-gpu names and the long names nvidia-smi prints in the header for the short aliases.
constexpr SmiFieldSpec kSmiFields[] = {
    {"timestamp", SmiField::kTimestamp, ""},
    {"index", SmiField::kIndex, ""},
    {"name", SmiField::kName, ""},
    {"gpu_name", SmiField::kName, ""},
    {"uuid", SmiField::kUuid, ""},
    {"gpu_uuid", SmiField::kUuid, ""},
    {"driver_version", SmiField::kDriver, ""},
    {"power.draw", SmiField::kPowerDraw, "W"},
    {"power.draw.instant", SmiField::kPowerInstant, "W"},
    {"power.draw.average", SmiField::kPowerAverage, "W"},
    {"power.limit", SmiField::kPowerLimit, "W"},
    {"enforced.power.limit", SmiField::kPowerLimit, "W"},
    {"clocks.sm", SmiField::kSmClock, "MHz"},
    {"clocks.current.sm", SmiField::kSmClock, "MHz"},
    {"clocks.gr", SmiField::kGraphicsClock, "MHz"},
    {"clocks.current.graphics", SmiField::kGraphicsClock, "MHz"},
    {"clocks.mem", SmiField::kMemoryClock, "MHz"},
    {"clocks.current.memory", SmiField::kMemoryClock, "MHz"},
    {"temperature.gpu", SmiField::kTemperature, "C"},
    {"clocks_event_reasons.active", SmiField::kThrottle, ""},
    {"clocks_throttle_reasons.active", SmiField::kThrottle, ""},
};

struct SmiColumn {
  std::size_t position = 0;
  std::string header;  // as written, e.g. "power.draw [W]"
  const SmiFieldSpec* spec = nullptr;
};

const SmiFieldSpec* find_smi_field(std::string_view name) {
  for (const SmiFieldSpec& spec : kSmiFields) {
    if (spec.name == name) return &spec;
  }
  return nullptr;
}

// Recognised columns of an nvidia-smi header, or empty when no column is recognised. Throws
// InvalidInput for a recognised column with a unit other than nvidia-smi's.
std::vector<SmiColumn> parse_smi_header(const std::string& file, const Line& header) {
  std::vector<SmiColumn> columns;
  const std::vector<std::string> cells = csv::split_line(header.text);
  for (std::size_t i = 0; i < cells.size(); ++i) {
    const std::string_view cell = trim(cells[i]);
    std::string_view name = cell;
    std::optional<std::string_view> unit;
    const auto bracket = cell.find(" [");
    if (bracket != std::string_view::npos && cell.back() == ']') {
      name = trim(cell.substr(0, bracket));
      unit = cell.substr(bracket + 2, cell.size() - bracket - 3);
    }
    const SmiFieldSpec* spec = find_smi_field(name);
    if (spec == nullptr) continue;
    // A missing unit is the one nvidia-smi uses; a different one would be misread by a factor.
    if (unit && *unit != spec->unit) {
      const std::string expected = spec->unit.empty()
                                       ? std::string(spec->name)
                                       : fmt::format("{} [{}]", spec->name, spec->unit);
      throw InvalidInput(
          fmt::format("{}: line {}: column '{}': unit '{}' is not understood; "
                      "expected '{}'",
                      file, header.number, cell, *unit, expected));
    }
    columns.push_back({i, std::string(cell), spec});
  }
  return columns;
}

// "2024/10/10 13:18:58.369" (local time) as whole seconds since the epoch and a fraction.
struct LocalTimestamp {
  std::time_t seconds = 0;
  double fraction_s = 0;
};

// Parses nvidia-smi's local timestamps. mktime (which consults the time zone database on every
// call) runs once per hour of the log rather than once per row: logs at 1 ms hold millions of
// rows, and daylight-saving changes fall on whole hours.
class LocalTimeParser {
 public:
  std::optional<LocalTimestamp> parse(std::string_view text) {
    // YYYY/MM/DD HH:MM:SS, then an optional .fraction
    constexpr std::size_t kLength = 19;
    if (text.size() < kLength || text[4] != '/' || text[7] != '/' || text[10] != ' ' ||
        text[13] != ':' || text[16] != ':') {
      return std::nullopt;
    }
    const std::optional<int> year = digits(text.substr(0, 4));
    const std::optional<int> month = digits(text.substr(5, 2));
    const std::optional<int> day = digits(text.substr(8, 2));
    const std::optional<int> hour = digits(text.substr(11, 2));
    const std::optional<int> minute = digits(text.substr(14, 2));
    const std::optional<int> second = digits(text.substr(17, 2));
    if (!year || !month || !day || !hour || !minute || !second || *month < 1 || *month > 12 ||
        *day < 1 || *day > 31 || *hour > 23 || *minute > 59 || *second > 60) {
      return std::nullopt;
    }
    LocalTimestamp result;
    const std::string_view rest = text.substr(kLength);
    if (!rest.empty()) {
      if (rest.size() < 2 || rest[0] != '.' ||
          rest.find_first_not_of("0123456789", 1) != std::string_view::npos) {
        return std::nullopt;
      }
      result.fraction_s = parse_number(fmt::format("0{}", rest)).value_or(0.0);
    }
    const std::array<int, 4> key = {*year, *month, *day, *hour};
    if (!hour_start_ || key != hour_key_) {
      std::tm tm{};
      tm.tm_year = *year - 1900;
      tm.tm_mon = *month - 1;
      tm.tm_mday = *day;
      tm.tm_hour = *hour;
      tm.tm_isdst = -1;  // let mktime decide whether daylight saving time applied then
      const std::time_t start = std::mktime(&tm);
      if (start == static_cast<std::time_t>(-1)) return std::nullopt;
      hour_start_ = start;
      hour_key_ = key;
    }
    result.seconds = *hour_start_ + *minute * 60 + *second;
    return result;
  }

 private:
  static std::optional<int> digits(std::string_view text) {
    int value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || end != text.data() + text.size() || text.front() == '-') {
      return std::nullopt;
    }
    return value;
  }

  std::array<int, 4> hour_key_{};
  std::optional<std::time_t> hour_start_;
};

// A cell's value, or nothing for nvidia-smi's bracketed placeholders ("[N/A]",
// "[Not Supported]", ...), an empty cell or "nan".
std::optional<std::string_view> smi_value(std::string_view cell) {
  cell = trim(cell);
  if (cell.empty() || cell == "N/A" || cell == "nan" || cell == "NaN") return std::nullopt;
  if (cell.front() == '[' && cell.back() == ']') return std::nullopt;
  return cell;
}

std::optional<double> smi_number(const std::string& file, const Line& line, const SmiColumn& column,
                                 std::string_view cell) {
  std::optional<std::string_view> value = smi_value(cell);
  if (!value) return std::nullopt;
  std::string_view number = *value;
  const std::string_view unit = column.spec->unit;
  // With units nvidia-smi writes "145.99 W"; with nounits just "145.99". temperature.gpu never
  // carries a unit in its cells.
  if (!unit.empty() && number.size() > unit.size() + 1 &&
      number.substr(number.size() - unit.size()) == unit &&
      number[number.size() - unit.size() - 1] == ' ') {
    number = trim(number.substr(0, number.size() - unit.size() - 1));
  }
  const std::optional<double> parsed = parse_number(number);
  if (!parsed) {
    throw InvalidInput(fmt::format("{}: line {}: column '{}': expected a number{}, found '{}'",
                                   file, line.number, column.header,
                                   unit.empty() ? "" : fmt::format(" in {}", unit), *value));
  }
  if (std::isnan(*parsed)) return std::nullopt;
  return parsed;
}

std::vector<PowerTrace> read_nvidia_smi_csv(const Lines& lines, std::size_t header_index,
                                            std::vector<SmiColumn> columns,
                                            TraceCollector& collector, TraceWarnings* warnings) {
  const std::string& file = collector.file();
  const Line& header = lines.lines[header_index];
  std::map<SmiField, SmiColumn> by_field;
  for (const SmiColumn& c : columns) by_field.emplace(c.spec->field, c);  // first one wins
  const SmiColumn* power = nullptr;
  bool averaged = false;
  for (const auto& [field, is_averaged] :
       {std::pair{SmiField::kPowerInstant, false}, std::pair{SmiField::kPowerAverage, true},
        std::pair{SmiField::kPowerDraw, true}}) {
    if (power == nullptr && by_field.count(field) != 0) {
      power = &by_field.at(field);
      averaged = is_averaged;
    }
  }
  if (by_field.count(SmiField::kTimestamp) == 0 || power == nullptr) {
    throw InvalidInput(fmt::format(
        "{}: line {}: expected an nvidia-smi --format=csv header with a 'timestamp' column and a "
        "'power.draw [W]' (or power.draw.instant / power.draw.average) column, such as '{}'; "
        "found '{}'",
        file, header.number, kNvidiaSmiExample, header.text));
  }
  auto column = [&](SmiField field) -> const SmiColumn* {
    const auto it = by_field.find(field);
    return it == by_field.end() ? nullptr : &it->second;
  };
  const SmiColumn* timestamp = column(SmiField::kTimestamp);
  const SmiColumn* index = column(SmiField::kIndex);
  const SmiColumn* sm_clock = column(SmiField::kSmClock);
  if (sm_clock == nullptr) sm_clock = column(SmiField::kGraphicsClock);
  const SmiColumn* memory_clock = column(SmiField::kMemoryClock);
  const SmiColumn* temperature = column(SmiField::kTemperature);
  const SmiColumn* throttle = column(SmiField::kThrottle);
  const SmiColumn* power_limit = column(SmiField::kPowerLimit);
  std::optional<LocalTimestamp> first_time;
  LocalTimeParser time_parser;

  for_each_row(
      lines, header_index + 1, header, csv::split_line(header.text).size(), collector,
      [&](const Line& line, const std::vector<std::string>& cells) {
        const std::string_view time_text = trim(cells[timestamp->position]);
        const std::optional<LocalTimestamp> time = time_parser.parse(time_text);
        if (!time) {
          throw InvalidInput(
              fmt::format("{}: line {}: column 'timestamp': expected local time as "
                          "YYYY/MM/DD HH:MM:SS.fff, found '{}'",
                          file, line.number, time_text));
        }
        if (!first_time) first_time = time;
        std::string gpu = "0";
        if (index != nullptr) {
          const std::optional<std::string_view> text = smi_value(cells[index->position]);
          if (!text || !parse_bits(*text) || text->substr(0, 2) == "0x") {
            throw InvalidInput(
                fmt::format("{}: line {}: column 'index': expected a GPU index "
                            "(an unsigned integer), found '{}'",
                            file, line.number, trim(cells[index->position])));
          }
          gpu = std::string(*text);
        }
        SourceInfo description;
        description.id = "nvidia-smi:" + gpu;
        const bool is_new = !collector.has_source(description.id);
        const std::size_t source = collector.source(description);
        SourceInfo& info = collector.info(source);
        if (is_new) {
          info.kind = "gpu";
          info.name = "GPU " + gpu;
          info.has_power = true;
          info.has_energy_counter = false;
          info.power_is_averaged = averaged;
        }
        // Descriptive columns: the first present value describes the GPU.
        if (const SmiColumn* c = column(SmiField::kName); c != nullptr && is_new) {
          if (const auto value = smi_value(cells[c->position])) info.name = std::string(*value);
        }
        if (const SmiColumn* c = column(SmiField::kUuid); c != nullptr && info.uuid.empty()) {
          if (const auto value = smi_value(cells[c->position])) info.uuid = std::string(*value);
        }
        if (const SmiColumn* c = column(SmiField::kDriver);
            c != nullptr && info.driver_version.empty()) {
          if (const auto value = smi_value(cells[c->position])) {
            info.driver_version = std::string(*value);
          }
        }
        if (power_limit != nullptr && !info.power_limit_w) {
          info.power_limit_w = smi_number(file, line, *power_limit, cells[power_limit->position]);
        }

        PowerSample s;
        // Differences of whole seconds and of fractions separately: keeps the millisecond digits
        // exact instead of losing them to the ~1.7e9 magnitude of epoch seconds.
        s.time_s = static_cast<double>(time->seconds - first_time->seconds) +
                   (time->fraction_s - first_time->fraction_s);
        s.epoch_s = static_cast<double>(time->seconds) + time->fraction_s;
        s.power_w = smi_number(file, line, *power, cells[power->position]);
        if (sm_clock != nullptr) {
          s.sm_clock_mhz = smi_number(file, line, *sm_clock, cells[sm_clock->position]);
        }
        if (memory_clock != nullptr) {
          s.memory_clock_mhz = smi_number(file, line, *memory_clock, cells[memory_clock->position]);
        }
        if (temperature != nullptr) {
          s.temperature_c = smi_number(file, line, *temperature, cells[temperature->position]);
        }
        if (throttle != nullptr) {
          if (const auto value = smi_value(cells[throttle->position])) {
            const std::optional<std::uint64_t> bits = parse_bits(*value);
            if (!bits) {
              throw InvalidInput(
                  fmt::format("{}: line {}: column '{}': expected clock-event "
                              "reason bits such as 0x0000000000000004, found '{}'",
                              file, line.number, throttle->header, *value));
            }
            s.throttle_reasons = *bits;
          }
        }
        collector.add(source, s, fmt::format("line {}", line.number));
      });
  return collector.finish(warnings, "empty, N/A or NaN power");
}

// ---------------------------------------------------------------------------------------------
// nnergy JSON

[[noreturn]] void json_fail(const std::string& file, const std::string& where,
                            const std::string& expected, const json& found) {
  throw InvalidInput(
      fmt::format("{}: {}: expected {}, found {}", file, where, expected, found.dump()));
}

std::optional<double> json_optional_number(const std::string& file, const std::string& where,
                                           const json& object, const char* key) {
  const auto it = object.find(key);
  if (it == object.end() || it->is_null()) return std::nullopt;
  if (!it->is_number()) json_fail(file, where + "." + key, "a number or null", *it);
  return it->get<double>();
}

std::string json_string(const std::string& file, const std::string& where, const json& object,
                        const char* key, bool required) {
  const auto it = object.find(key);
  if (it == object.end() || (!required && it->is_null())) {
    if (required) json_fail(file, where + "." + key, "a string", json());
    return "";
  }
  if (!it->is_string()) json_fail(file, where + "." + key, "a string", *it);
  return it->get<std::string>();
}

bool json_bool(const std::string& file, const std::string& where, const json& object,
               const char* key, bool fallback) {
  const auto it = object.find(key);
  if (it == object.end() || it->is_null()) return fallback;
  if (!it->is_boolean()) json_fail(file, where + "." + key, "true or false", *it);
  return it->get<bool>();
}

std::vector<PowerTrace> read_nnergy_json(const std::string& text, TraceCollector& collector,
                                         TraceWarnings* warnings) {
  const std::string& file = collector.file();
  json root;
  try {
    root = json::parse(text);
  } catch (const json::exception& e) {  // parse_error, or out_of_range: a number > 1e308
    throw InvalidInput(file + ": not valid JSON: " + e.what());
  }
  if (!root.is_object() || !root.contains("sources") || !root["sources"].is_array()) {
    throw InvalidInput(file +
                       ": expected nnergy's JSON trace, an object with a \"sources\" array of "
                       "{\"info\": {...}, \"samples\": [...]}");
  }
  const json& sources = root["sources"];
  for (std::size_t i = 0; i < sources.size(); ++i) {
    const std::string where = fmt::format("sources[{}]", i);
    const json& entry = sources[i];
    if (!entry.is_object()) json_fail(file, where, "an object", entry);
    const auto info_it = entry.find("info");
    if (info_it == entry.end() || !info_it->is_object()) {
      json_fail(file, where + ".info", "an object", info_it == entry.end() ? json() : *info_it);
    }
    const std::string info_where = where + ".info";
    SourceInfo info;
    info.id = json_string(file, info_where, *info_it, "id", true);
    info.kind = json_string(file, info_where, *info_it, "kind", false);
    info.name = json_string(file, info_where, *info_it, "name", false);
    info.uuid = json_string(file, info_where, *info_it, "uuid", false);
    info.driver_version = json_string(file, info_where, *info_it, "driver_version", false);
    info.power_limit_w = json_optional_number(file, info_where, *info_it, "power_limit_w");
    info.has_energy_counter = json_bool(file, info_where, *info_it, "has_energy_counter", false);
    info.has_power = json_bool(file, info_where, *info_it, "has_power", true);
    info.power_is_averaged = json_bool(file, info_where, *info_it, "power_is_averaged", false);
    if (collector.has_source(info.id)) {
      throw InvalidInput(
          fmt::format("{}: {}.id: source '{}' appears twice", file, info_where, info.id));
    }
    const std::size_t source = collector.source(info);
    const auto samples = entry.find("samples");
    if (samples == entry.end() || !samples->is_array()) {
      json_fail(file, where + ".samples", "an array", samples == entry.end() ? json() : *samples);
    }
    for (std::size_t k = 0; k < samples->size(); ++k) {
      const std::string place = fmt::format("{}.samples[{}]", where, k);
      const json& object = (*samples)[k];
      if (!object.is_object()) json_fail(file, place, "an object", object);
      PowerSample s;
      const std::optional<double> time = json_optional_number(file, place, object, "time_s");
      if (!time) json_fail(file, place + ".time_s", "a number", object.value("time_s", json()));
      s.time_s = *time;
      s.epoch_s = json_optional_number(file, place, object, "epoch_s").value_or(0.0);
      s.power_w = json_optional_number(file, place, object, "power_w");
      s.energy_j = json_optional_number(file, place, object, "energy_j");
      s.sm_clock_mhz = json_optional_number(file, place, object, "sm_clock_mhz");
      s.memory_clock_mhz = json_optional_number(file, place, object, "memory_clock_mhz");
      s.temperature_c = json_optional_number(file, place, object, "temperature_c");
      if (const auto bits = object.find("throttle_reasons");
          bits != object.end() && !bits->is_null()) {
        if (!bits->is_number_unsigned()) {
          json_fail(file, place + ".throttle_reasons", "an unsigned integer", *bits);
        }
        s.throttle_reasons = bits->get<std::uint64_t>();
      }
      collector.add(source, s, place);
    }
  }
  return collector.finish(warnings, "neither power nor energy");
}

// ---------------------------------------------------------------------------------------------
// Writing

ordered_json number_or_null(const std::optional<double>& value) {
  // JSON has no NaN or infinity; such values are as absent as a missing reading.
  if (!value || !std::isfinite(*value)) return nullptr;
  return *value;
}

ordered_json info_json(const SourceInfo& info) {
  ordered_json j = ordered_json::object();
  j["id"] = info.id;
  j["kind"] = info.kind;
  j["name"] = info.name;
  j["uuid"] = info.uuid;
  j["driver_version"] = info.driver_version;
  j["power_limit_w"] = number_or_null(info.power_limit_w);
  j["has_energy_counter"] = info.has_energy_counter;
  j["has_power"] = info.has_power;
  j["power_is_averaged"] = info.power_is_averaged;
  return j;
}

ordered_json sample_json(const PowerSample& s) {
  ordered_json j = ordered_json::object();
  j["time_s"] = s.time_s;
  j["epoch_s"] = s.epoch_s;
  j["power_w"] = number_or_null(s.power_w);
  j["energy_j"] = number_or_null(s.energy_j);
  j["sm_clock_mhz"] = number_or_null(s.sm_clock_mhz);
  j["memory_clock_mhz"] = number_or_null(s.memory_clock_mhz);
  j["temperature_c"] = number_or_null(s.temperature_c);
  j["throttle_reasons"] = s.throttle_reasons;
  return j;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Public functions

std::vector<PowerTrace> read_trace_text(const std::string& text, const std::string& file_label,
                                        TraceWarnings* warnings) {
  TraceCollector collector(file_label);
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) {
    throw InvalidInput(
        fmt::format("{}: empty file; expected an nnergy CSV or JSON trace or an "
                    "nvidia-smi --format=csv log starting with a header such as "
                    "'{}'",
                    file_label, kNvidiaSmiExample));
  }
  if (text[first] == '{') return read_nnergy_json(text, collector, warnings);

  const Lines lines = split_lines(text);
  std::size_t header_index = 0;
  while (header_index < lines.lines.size() && (trim(lines.lines[header_index].text).empty() ||
                                               lines.lines[header_index].text.front() == '#')) {
    ++header_index;
  }
  if (header_index == lines.lines.size()) {
    throw InvalidInput(fmt::format(
        "{}: no header after the comment lines; expected nnergy's CSV header or an nvidia-smi "
        "--format=csv header such as '{}'",
        file_label, kNvidiaSmiExample));
  }
  const Line& header = lines.lines[header_index];
  const std::vector<std::string> cells = csv::split_line(header.text);
  if (std::equal(cells.begin(), cells.end(), kCsvColumns.begin(), kCsvColumns.end())) {
    return read_nnergy_csv(lines, header_index, collector, warnings);
  }
  std::vector<SmiColumn> columns = parse_smi_header(file_label, header);
  if (columns.empty()) bad_header(file_label, header);
  return read_nvidia_smi_csv(lines, header_index, std::move(columns), collector, warnings);
}

std::vector<PowerTrace> read_trace_file(const std::filesystem::path& path,
                                        TraceWarnings* warnings) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    const int error_number = errno;
    throw InvalidInput(fmt::format("{}: cannot open the trace file: {}", path.string(),
                                   std::generic_category().message(error_number)));
  }
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw InvalidInput(path.string() + ": cannot read the trace file");
  return read_trace_text(text.str(), path.string(), warnings);
}

TraceCsvWriter::TraceCsvWriter(std::ostream& out, const std::string& context_comments,
                               const std::vector<SourceInfo>& sources)
    : out_(out) {
  out_ << context_comments;
  if (!context_comments.empty() && context_comments.back() != '\n') out_ << '\n';
  for (const SourceInfo& info : sources) {
    out_ << kSourcePrefix << escape_source_field(info.id) << '|' << escape_source_field(info.kind)
         << '|' << escape_source_field(info.name) << '|' << escape_source_field(info.uuid) << '|'
         << escape_source_field(info.driver_version) << '|' << format_optional(info.power_limit_w)
         << '|' << (info.has_energy_counter ? "true" : "false") << '|'
         << (info.power_is_averaged ? "true" : "false") << '|'
         << (info.has_power ? "true" : "false") << '\n';
    ids_.push_back(csv::field(info.id));
  }
  for (std::size_t i = 0; i < kCsvColumns.size(); ++i) {
    out_ << (i == 0 ? "" : ",") << kCsvColumns[i];
  }
  out_ << '\n';
}

void TraceCsvWriter::write(std::size_t source, const PowerSample& sample) {
  if (source >= ids_.size()) {
    throw InternalError(fmt::format("TraceCsvWriter::write: source {} of {}", source, ids_.size()));
  }
  out_ << ids_[source] << ',' << format_number(sample.time_s) << ','
       << format_number(sample.epoch_s) << ',' << format_optional(sample.power_w) << ','
       << format_optional(sample.energy_j) << ',' << format_optional(sample.sm_clock_mhz) << ','
       << format_optional(sample.memory_clock_mhz) << ',' << format_optional(sample.temperature_c)
       << ',' << sample.throttle_reasons << '\n';
}

void write_trace_csv(std::ostream& out, const std::string& context_comments,
                     const std::vector<PowerTrace>& traces) {
  std::vector<SourceInfo> infos;
  for (const PowerTrace& trace : traces) infos.push_back(trace.info);
  TraceCsvWriter writer(out, context_comments, infos);
  for (std::size_t i = 0; i < traces.size(); ++i) {
    for (const PowerSample& sample : traces[i].samples) writer.write(i, sample);
  }
}

std::string trace_json(const std::string& context_json, const std::vector<PowerTrace>& traces) {
  ordered_json context = ordered_json::object();
  if (!context_json.empty()) {
    try {
      context = ordered_json::parse(context_json);
    } catch (const json::parse_error& e) {
      throw InternalError(std::string("trace_json: the context is not JSON: ") + e.what());
    }
    if (!context.is_object()) throw InternalError("trace_json: the context is not a JSON object");
  }
  // One sample per line: readable and diffable without the size of a fully indented dump.
  std::string out = "{\n  \"context\": " + context.dump() + ",\n  \"sources\": [";
  for (std::size_t i = 0; i < traces.size(); ++i) {
    out += i == 0 ? "\n" : ",\n";
    out += "    {\"info\": " + info_json(traces[i].info).dump() + ",\n     \"samples\": [";
    const std::vector<PowerSample>& samples = traces[i].samples;
    for (std::size_t k = 0; k < samples.size(); ++k) {
      out += k == 0 ? "\n      " : ",\n      ";
      out += sample_json(samples[k]).dump();
    }
    out += samples.empty() ? "]}" : "\n     ]}";
  }
  out += traces.empty() ? "]\n}\n" : "\n  ]\n}\n";
  return out;
}

}  // namespace nnergy::measure
