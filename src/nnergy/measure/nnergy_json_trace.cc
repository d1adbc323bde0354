#include <fmt/format.h>

#include <cmath>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "nnergy/core/error.h"
#include "nnergy/core/json_document.h"
#include "nnergy/measure/power_trace_format.h"
#include "nnergy/measure/trace_file.h"
#include "nnergy/measure/trace_reading.h"

// nnergy's JSON power trace: its reader (a PowerTraceFormat) and writer (trace_json).

namespace nnergy::measure {

namespace {

using nlohmann::json;
using nlohmann::ordered_json;

[[noreturn]] void json_fail(const std::string& file, const std::string& where,
                            const std::string& expected, const json& found) {
  throw InvalidInput(fmt::format("{}: {}: expected {}, found {}", file, where, expected,
                                 core::describe_json_value(found)));
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

std::vector<PowerTrace> read_nnergy_json(const std::string& text, const std::string& file,
                                         TraceWarnings* warnings) {
  TraceCollector collector(file);
  json root;
  try {
    root = core::parse_json_document(text, file);
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

class NnergyJsonFormat : public PowerTraceFormat {
 public:
  std::string name() const override { return "nnergy-json"; }
  bool recognizes(const TraceText& file) const override { return file.json; }
  std::vector<PowerTrace> read(const TraceText& file, TraceWarnings* warnings) const override {
    return read_nnergy_json(file.text, file.label, warnings);
  }
};

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

std::unique_ptr<PowerTraceFormat> make_nnergy_json_format() {
  return std::make_unique<NnergyJsonFormat>();
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
