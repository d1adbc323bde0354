#include "nnergy/archline/archline_point.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>

#include "nnergy/core/error.h"
#include "nnergy/core/text.h"

namespace nnergy::archline {

namespace {

constexpr const char* kColumns[] = {
    "benchmark",    "precision",    "occupancy",        "intensity_flop_per_byte",
    "flop_count",   "byte_count",   "time_s",           "energy_j",
    "power_mean_w", "sm_clock_mhz", "memory_clock_mhz", "throttle_reasons",
    "admitted"};
constexpr const char* kRequired[] = {"benchmark",  "precision", "flop_count",
                                     "byte_count", "time_s",    "energy_j"};

std::string optional_number(const std::optional<double>& value) {
  return value ? fmt::format("{:.10g}", *value) : std::string();
}

}  // namespace

std::string_view to_string(BenchmarkKind kind) {
  switch (kind) {
    case BenchmarkKind::kBaseline:
      return "baseline";
    case BenchmarkKind::kCopy:
      return "copy";
    case BenchmarkKind::kFlop:
      return "flop";
    case BenchmarkKind::kRoofline:
      return "roofline";
  }
  throw InternalError("unknown BenchmarkKind");
}

BenchmarkKind parse_benchmark_kind(std::string_view name, const std::string& where) {
  for (BenchmarkKind k : {BenchmarkKind::kBaseline, BenchmarkKind::kCopy, BenchmarkKind::kFlop,
                          BenchmarkKind::kRoofline}) {
    if (name == to_string(k)) return k;
  }
  throw InvalidInput(where + ": expected a benchmark (baseline, copy, flop, roofline), found '" +
                     std::string(name) + "'");
}

double ArchlinePoint::intensity_flop_per_byte() const {
  return byte_count > 0 ? flop_count / byte_count : std::numeric_limits<double>::infinity();
}

std::optional<std::string> ArchlineDataSet::context_value(const std::string& key) const {
  for (const auto& [k, v] : context) {
    if (k == key) return v;
  }
  return std::nullopt;
}

std::string ArchlineDataSet::points_origin() const {
  const std::optional<std::string> kind = context_value("kind");
  return kind && kind->find("synthetic") != std::string::npos ? "synthetic" : "measured";
}

std::string archline_csv_header() {
  std::string header;
  for (const char* column : kColumns) {
    if (!header.empty()) header += ',';
    header += column;
  }
  return header;
}

std::string to_csv(const std::vector<ArchlinePoint>& points, const RunContext& context) {
  std::string out = context.to_csv_comments() + archline_csv_header() + "\n";
  for (const ArchlinePoint& p : points) {
    const double intensity = p.intensity_flop_per_byte();
    out += fmt::format("{},{},{:.6g},{},{:.10g},{:.10g},{:.10g},{:.10g},{:.6g},{},{},{},{}\n",
                       to_string(p.benchmark), device::to_string(p.precision), p.occupancy,
                       std::isfinite(intensity) ? fmt::format("{:.6g}", intensity) : "inf",
                       p.flop_count, p.byte_count, p.time_s, p.energy_j, p.power_mean_w,
                       optional_number(p.sm_clock_mhz), optional_number(p.memory_clock_mhz),
                       p.throttle_reasons, p.admitted ? 1 : 0);
  }
  return out;
}

ArchlineDataSet parse_archline_csv(const std::string& text, const std::string& source) {
  ArchlineDataSet data;
  std::istringstream in(text);
  std::string line;
  std::size_t line_number = 0;
  std::map<std::string, std::size_t> column_of;
  std::size_t column_count = 0;
  bool have_header = false;
  while (std::getline(in, line)) {
    ++line_number;
    const std::string trimmed(trim(line));
    if (trimmed.empty()) continue;
    if (trimmed[0] == '#') {
      const std::string body(trim(std::string_view(trimmed).substr(1)));
      const std::size_t colon = body.find(':');
      if (colon != std::string::npos) {
        data.context.emplace_back(std::string(trim(std::string_view(body).substr(0, colon))),
                                  std::string(trim(std::string_view(body).substr(colon + 1))));
      }
      continue;
    }
    const std::vector<std::string> cells = split_trimmed(trimmed, ',');
    const std::string where = fmt::format("{}:{}", source, line_number);
    if (!have_header) {
      for (std::size_t i = 0; i < cells.size(); ++i) column_of[cells[i]] = i;
      // Files written before the column was named byte_count call it bytes.
      if (column_of.count("bytes") != 0 && column_of.count("byte_count") == 0) {
        column_of["byte_count"] = column_of.at("bytes");
      }
      std::vector<std::string> missing;
      for (const char* required : kRequired) {
        if (column_of.count(required) == 0) missing.emplace_back(required);
      }
      if (!missing.empty()) {
        throw InvalidInput(
            where + ": missing column(s) " + join_with_commas(missing) +
            "; expected a header with at least " +
            "benchmark, precision, flop_count, byte_count, time_s, energy_j; found '" + trimmed +
            "'");
      }
      column_count = cells.size();
      have_header = true;
      continue;
    }
    if (cells.size() != column_count) {
      throw InvalidInput(
          fmt::format("{}: expected {} columns, found {}", where, column_count, cells.size()));
    }
    auto cell = [&](const char* column) -> const std::string* {
      auto it = column_of.find(column);
      return it == column_of.end() ? nullptr : &cells[it->second];
    };
    auto number = [&](const char* column) -> std::optional<double> {
      const std::string* c = cell(column);
      if (c == nullptr || c->empty()) return std::nullopt;
      double value = 0;
      const char* first = c->data();
      const char* last = c->data() + c->size();
      auto [ptr, ec] = std::from_chars(first, last, value);
      if (ec != std::errc() || ptr != last || !std::isfinite(value)) {
        throw InvalidInput(
            fmt::format("{}: column {} (column {}): expected a finite number, found '{}'", where,
                        column, column_of.at(column) + 1, *c));
      }
      return value;
    };
    auto required_number = [&](const char* column) {
      std::optional<double> v = number(column);
      if (!v) {
        throw InvalidInput(
            fmt::format("{}: column {} (column {}): expected a number, found an "
                        "empty cell",
                        where, column, column_of.at(column) + 1));
      }
      return *v;
    };
    ArchlinePoint p;
    p.benchmark = parse_benchmark_kind(*cell("benchmark"), where + ": column benchmark");
    p.precision = device::parse_precision(*cell("precision"), where + ": column precision");
    p.flop_count = required_number("flop_count");
    p.byte_count = required_number("byte_count");
    p.time_s = required_number("time_s");
    p.energy_j = required_number("energy_j");
    if (p.flop_count < 0 || p.byte_count < 0) {
      throw InvalidInput(fmt::format(
          "{}: expected flop_count (W) >= 0 and bytes (Q) >= 0, found W = {:g} flop, Q = {:g} B",
          where, p.flop_count, p.byte_count));
    }
    if (p.time_s <= 0 || p.energy_j <= 0) {
      throw InvalidInput(fmt::format(
          "{}: expected time_s (T) > 0 and energy_j (E) > 0, found T = {:g} s, E = {:g} J", where,
          p.time_s, p.energy_j));
    }
    const bool needs_w =
        p.benchmark == BenchmarkKind::kFlop || p.benchmark == BenchmarkKind::kRoofline;
    const bool needs_q =
        p.benchmark == BenchmarkKind::kCopy || p.benchmark == BenchmarkKind::kRoofline;
    if ((needs_w && p.flop_count <= 0) || (needs_q && p.byte_count <= 0)) {
      throw InvalidInput(fmt::format(
          "{}: a {} point needs {}; found W = {:g} flop, Q = {:g} B", where, to_string(p.benchmark),
          needs_w && needs_q ? "W > 0 and Q > 0" : (needs_w ? "W > 0" : "Q > 0"), p.flop_count,
          p.byte_count));
    }
    if (std::optional<double> occupancy = number("occupancy")) {
      if (*occupancy <= 0 || *occupancy > 1) {
        throw InvalidInput(
            fmt::format("{}: column occupancy: expected a fraction in (0, 1], "
                        "found {:g}",
                        where, *occupancy));
      }
      p.occupancy = *occupancy;
    }
    p.power_mean_w = number("power_mean_w").value_or(p.energy_j / p.time_s);
    p.sm_clock_mhz = number("sm_clock_mhz");
    p.memory_clock_mhz = number("memory_clock_mhz");
    if (std::optional<double> reasons = number("throttle_reasons")) {
      if (*reasons < 0) {
        throw InvalidInput(where + ": column throttle_reasons: expected a non-negative integer");
      }
      p.throttle_reasons = static_cast<std::uint64_t>(*reasons);
    }
    if (std::optional<double> admitted = number("admitted")) {
      if (*admitted != 0 && *admitted != 1) {
        throw InvalidInput(
            fmt::format("{}: column admitted: expected 0 or 1, found {:g}", where, *admitted));
      }
      p.admitted = *admitted == 1;
    }
    data.points.push_back(p);
  }
  if (!have_header) {
    throw InvalidInput(source + ": expected a CSV header line and points, found no header");
  }
  return data;
}

ArchlineDataSet read_archline_csv(const std::filesystem::path& path) {
  std::ifstream file(path);
  if (!file) throw InvalidInput(path.string() + ": cannot open the archline CSV");
  std::ostringstream text;
  text << file.rdbuf();
  return parse_archline_csv(text.str(), path.string());
}

}  // namespace nnergy::archline
