#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "nnergy/core/csv.h"
#include "nnergy/core/error.h"
#include "nnergy/measure/power_trace_format.h"
#include "nnergy/measure/trace_file.h"
#include "nnergy/measure/trace_reading.h"

// nnergy's CSV power trace: its reader (a PowerTraceFormat) and writer (TraceCsvWriter).

namespace nnergy::measure {

namespace {

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

std::vector<PowerTrace> read_nnergy_csv(const TraceText& trace, TraceWarnings* warnings) {
  const std::string& file = trace.label;
  TraceCollector collector(file);
  for (std::size_t i = 0; i < trace.header_index; ++i) {
    const Line& line = trace.lines.lines[i];
    if (line.text.substr(0, kSourcePrefix.size()) != kSourcePrefix) continue;
    const SourceInfo info = parse_source_line(file, line);
    if (collector.has_source(info.id)) {
      throw InvalidInput(
          fmt::format("{}: line {}: source '{}' is declared twice", file, line.number, info.id));
    }
    collector.source(info);
  }
  for_each_row(trace, collector, [&](const Line& line, const std::vector<std::string>& cells) {
    if (!collector.has_source(cells[0])) {
      throw InvalidInput(
          fmt::format("{}: line {}: source '{}' is not declared by a '# source:' line before the "
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

class NnergyCsvFormat : public PowerTraceFormat {
 public:
  std::string name() const override { return "nnergy-csv"; }
  bool recognizes(const TraceText& file) const override {
    if (file.json) return false;
    const std::vector<std::string> cells = csv::split_line(file.header().text);
    return std::equal(cells.begin(), cells.end(), kCsvColumns.begin(), kCsvColumns.end());
  }
  std::vector<PowerTrace> read(const TraceText& file, TraceWarnings* warnings) const override {
    return read_nnergy_csv(file, warnings);
  }
};

}  // namespace

std::unique_ptr<PowerTraceFormat> make_nnergy_csv_format() {
  return std::make_unique<NnergyCsvFormat>();
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

}  // namespace nnergy::measure
