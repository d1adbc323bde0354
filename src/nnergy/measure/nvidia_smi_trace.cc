#include <fmt/format.h>

#include <array>
#include <charconv>
#include <cmath>
#include <ctime>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "nnergy/core/csv.h"
#include "nnergy/core/error.h"
#include "nnergy/core/text.h"
#include "nnergy/measure/power_trace_format.h"
#include "nnergy/measure/trace_file.h"
#include "nnergy/measure/trace_reading.h"

// nvidia-smi --query-gpu=... --format=csv logs as power traces (a PowerTraceFormat); the columns
// read are listed at read_trace_file (trace_file.h).

namespace nnergy::measure {

namespace {

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

std::vector<PowerTrace> read_nvidia_smi_csv(const TraceText& trace,
                                            const std::vector<SmiColumn>& columns,
                                            TraceWarnings* warnings) {
  const std::string& file = trace.label;
  TraceCollector collector(file);
  const Line& header = trace.header();
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

  for_each_row(trace, collector, [&](const Line& line, const std::vector<std::string>& cells) {
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

class NvidiaSmiFormat : public PowerTraceFormat {
 public:
  std::string name() const override { return "nvidia-smi"; }
  bool recognizes(const TraceText& file) const override {
    return !file.json && !parse_smi_header(file.label, file.header()).empty();
  }
  std::vector<PowerTrace> read(const TraceText& file, TraceWarnings* warnings) const override {
    return read_nvidia_smi_csv(file, parse_smi_header(file.label, file.header()), warnings);
  }
};

}  // namespace

std::unique_ptr<PowerTraceFormat> make_nvidia_smi_format() {
  return std::make_unique<NvidiaSmiFormat>();
}

}  // namespace nnergy::measure
