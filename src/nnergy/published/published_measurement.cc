#include "nnergy/published/published_measurement.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "nnergy/core/error.h"
#include "nnergy/core/json_document.h"

namespace nnergy::published {

namespace {

using nlohmann::json;

// Every key a record may carry; anything else is reported rather than dropped.
const std::set<std::string>& known_fields() {
  static const std::set<std::string> fields = {
      "id",    "source",      "location",  "gpu",       "network",   "mode",
      "batch", "input_shape", "precision", "framework", "clock_mhz", "quantity",
      "value", "unit",        "value_si",  "unit_si",   "measured",  "derivation",
      "grade", "notes",       "n_samples", "median_ms", "stdev_ms",  "layer"};
  return fields;
}

// A short description of a JSON value for messages: its type and, when short, its text.
std::string describe(const json& v) {
  if (v.is_null()) return "null";
  if (v.is_array()) return "a list";
  if (v.is_object()) return "an object";
  std::string text = core::describe_json_value(v);
  if (text.size() > 40) text = text.substr(0, 37) + "...";
  if (v.is_string()) return "the string " + text;
  if (v.is_boolean()) return text;
  return "the number " + text;
}

// Reads the fields of one record object, collecting every problem instead of stopping at the
// first, so that one rejection message lists all of them.
class RecordFields {
 public:
  explicit RecordFields(const json& record) : record_(record) {}

  std::string text(const char* key, bool non_empty) {
    const auto it = record_.find(key);
    if (it == record_.end()) {
      problems_.push_back(fmt::format("'{}' is missing (expected text)", key));
      return {};
    }
    if (!it->is_string()) {
      problems_.push_back(fmt::format("'{}' is {} (expected text)", key, describe(*it)));
      return {};
    }
    std::string value = it->get<std::string>();
    if (non_empty && value.empty()) {
      problems_.push_back(fmt::format("'{}' is empty (expected text)", key));
    }
    return value;
  }

  std::optional<std::string> optional_text(const char* key) {
    const auto it = record_.find(key);
    if (it == record_.end() || it->is_null()) return std::nullopt;
    if (!it->is_string()) {
      problems_.push_back(fmt::format("'{}' is {} (expected text or null)", key, describe(*it)));
      return std::nullopt;
    }
    return it->get<std::string>();
  }

  double number(const char* key) {
    const auto it = record_.find(key);
    if (it == record_.end()) {
      problems_.push_back(fmt::format("'{}' is missing (expected a number)", key));
      return 0;
    }
    if (!it->is_number()) {
      problems_.push_back(fmt::format("'{}' is {} (expected a number)", key, describe(*it)));
      return 0;
    }
    return it->get<double>();
  }

  std::optional<double> optional_number(const char* key) {
    const auto it = record_.find(key);
    if (it == record_.end() || it->is_null()) return std::nullopt;
    if (!it->is_number()) {
      problems_.push_back(
          fmt::format("'{}' is {} (expected a number or null)", key, describe(*it)));
      return std::nullopt;
    }
    return it->get<double>();
  }

  std::optional<std::int64_t> optional_integer(const char* key) {
    const auto it = record_.find(key);
    if (it == record_.end() || it->is_null()) return std::nullopt;
    if (it->is_number_integer()) return it->get<std::int64_t>();
    // 16.0 is the integer 16; 16.5 is not.
    if (it->is_number_float()) {
      const double v = it->get<double>();
      if (std::isfinite(v) && v == std::trunc(v) && std::fabs(v) < 9.0e15) {
        return static_cast<std::int64_t>(v);
      }
    }
    problems_.push_back(
        fmt::format("'{}' is {} (expected an integer or null)", key, describe(*it)));
    return std::nullopt;
  }

  void problem(std::string text) { problems_.push_back(std::move(text)); }
  const std::vector<std::string>& problems() const { return problems_; }

 private:
  const json& record_;
  std::vector<std::string> problems_;
};

std::string join(const std::vector<std::string>& parts, std::string_view separator) {
  std::string out;
  for (const std::string& p : parts) {
    if (!out.empty()) out += separator;
    out += p;
  }
  return out;
}

// Validates one element of the list; fills `out` and returns the problems (none: accepted).
std::vector<std::string> read_record(const json& record, PublishedMeasurement& out) {
  if (!record.is_object()) {
    return {fmt::format("the record is {} (expected an object)", describe(record))};
  }
  RecordFields f(record);
  for (const auto& [key, value] : record.items()) {
    if (known_fields().count(key) == 0) {
      f.problem(
          fmt::format("unknown field '{}' (known fields are listed in "
                      "data/calibration/README.md)",
                      key));
    }
  }
  out.id = f.text("id", true);
  out.source = f.text("source", true);
  out.location = f.text("location", false);
  out.gpu = f.text("gpu", true);
  out.network = f.text("network", false);
  out.mode = f.text("mode", false);
  out.batch = f.optional_integer("batch");
  out.input_shape = f.optional_text("input_shape");
  out.precision = f.optional_text("precision");
  out.framework = f.text("framework", false);
  out.clock_mhz = f.optional_integer("clock_mhz");
  out.quantity = f.text("quantity", true);
  out.value = f.number("value");
  out.unit = f.text("unit", true);
  out.value_si = f.optional_number("value_si");
  out.unit_si = f.text("unit_si", true);
  out.derivation = f.text("derivation", false);
  out.grade = f.text("grade", true);
  out.notes = f.text("notes", false);
  out.n_samples = f.optional_integer("n_samples");
  out.median_ms = f.optional_number("median_ms");
  out.stdev_ms = f.optional_number("stdev_ms");
  out.layer = f.optional_text("layer");

  const auto grade_it = record.find("grade");
  if (grade_it != record.end() && grade_it->is_string() && !out.grade.empty() &&
      std::find(published_grades().begin(), published_grades().end(), out.grade) ==
          published_grades().end()) {
    f.problem(
        fmt::format("grade '{}' is not one of: {}", out.grade, join(published_grades(), ", ")));
  }
  const auto measured_it = record.find("measured");
  if (measured_it == record.end()) {
    f.problem("'measured' is missing (expected true)");
  } else if (!measured_it->is_boolean()) {
    f.problem(fmt::format("'measured' is {} (expected true)", describe(*measured_it)));
  } else if (!measured_it->get<bool>()) {
    f.problem("'measured' is false: only measured figures are accepted, not predictions");
  }
  out.measured = true;
  return f.problems();
}

// 1-based line and column of byte `offset` (0-based) in `text`.
std::pair<std::size_t, std::size_t> line_and_column(std::string_view text, std::size_t offset) {
  offset = std::min(offset, text.size());
  std::size_t line = 1;
  std::size_t line_start = 0;
  for (std::size_t i = 0; i < offset; ++i) {
    if (text[i] == '\n') {
      ++line;
      line_start = i + 1;
    }
  }
  return {line, offset - line_start + 1};
}

}  // namespace

const std::vector<std::string>& published_grades() {
  static const std::vector<std::string> grades = {"A", "B", "C"};
  return grades;
}

std::string RejectedRecord::name() const { return id ? *id : fmt::format("record [{}]", index); }

PublishedReadResult parse_published_measurements(std::string_view json_text,
                                                 const std::string& source_name) {
  json root;
  try {
    root = core::parse_json_document(json_text, source_name);
  } catch (const json::parse_error& e) {
    // e.byte is 1-based: the position of the character that broke the parse.
    const std::size_t offset = e.byte == 0 ? 0 : e.byte - 1;
    const auto [line, column] = line_and_column(json_text, offset);
    throw InvalidInput(fmt::format(
        "{}: not valid JSON at line {}, column {} (byte offset {}): expected a JSON list of "
        "published-measurement records; the parser says: {}",
        source_name, line, column, offset, e.what()));
  } catch (const json::out_of_range& e) {
    // Thrown by the parser for a number beyond double's range (1e999): also not readable JSON.
    throw InvalidInput(fmt::format(
        "{}: not valid JSON: expected a JSON list of published-measurement records; the parser "
        "says: {}",
        source_name, e.what()));
  }
  if (!root.is_array()) {
    throw InvalidInput(fmt::format(
        "{}: expected a JSON list of published-measurement records at the top level, found {}",
        source_name, describe(root)));
  }

  PublishedReadResult result;
  result.records_read = root.size();
  std::map<std::string, std::size_t> first_index_of_id;
  for (std::size_t i = 0; i < root.size(); ++i) {
    const json& element = root[i];
    PublishedMeasurement record;
    std::vector<std::string> problems = read_record(element, record);
    std::optional<std::string> id;
    if (element.is_object() && element.contains("id") && element["id"].is_string() &&
        !element["id"].get<std::string>().empty()) {
      id = element["id"].get<std::string>();
      const auto [it, inserted] = first_index_of_id.emplace(*id, i);
      if (!inserted) {
        problems.push_back(
            fmt::format("duplicate id: record [{}] has the same id and is the one "
                        "considered",
                        it->second));
      }
    }
    if (problems.empty()) {
      result.records.push_back(std::move(record));
    } else {
      result.rejected.push_back({i, id, join(problems, "; ")});
    }
  }
  return result;
}

PublishedReadResult read_published_measurements(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    throw InvalidInput(fmt::format(
        "{}: cannot open the file (expected a JSON list of published-measurement records)", path));
  }
  std::ostringstream text;
  text << file.rdbuf();
  if (file.bad()) throw InvalidInput(fmt::format("{}: cannot read the file", path));
  return parse_published_measurements(text.str(), path);
}

std::vector<std::string> differing_fields(const PublishedMeasurement& a,
                                          const PublishedMeasurement& b) {
  std::vector<std::string> names;
  const auto check = [&names](bool equal, const char* name) {
    if (!equal) names.emplace_back(name);
  };
  check(a.id == b.id, "id");
  check(a.source == b.source, "source");
  check(a.location == b.location, "location");
  check(a.gpu == b.gpu, "gpu");
  check(a.network == b.network, "network");
  check(a.mode == b.mode, "mode");
  check(a.batch == b.batch, "batch");
  check(a.input_shape == b.input_shape, "input_shape");
  check(a.precision == b.precision, "precision");
  check(a.framework == b.framework, "framework");
  check(a.clock_mhz == b.clock_mhz, "clock_mhz");
  check(a.quantity == b.quantity, "quantity");
  check(a.value == b.value, "value");
  check(a.unit == b.unit, "unit");
  check(a.value_si == b.value_si, "value_si");
  check(a.unit_si == b.unit_si, "unit_si");
  check(a.measured == b.measured, "measured");
  check(a.derivation == b.derivation, "derivation");
  check(a.grade == b.grade, "grade");
  check(a.notes == b.notes, "notes");
  check(a.n_samples == b.n_samples, "n_samples");
  check(a.median_ms == b.median_ms, "median_ms");
  check(a.stdev_ms == b.stdev_ms, "stdev_ms");
  check(a.layer == b.layer, "layer");
  return names;
}

}  // namespace nnergy::published
