#include "nnergy/account/chrome_event_parser.h"

#include <charconv>
#include <cmath>
#include <functional>

#include "nnergy/core/error.h"

namespace nnergy::account {
namespace {

std::string where(const std::string& file_label, std::size_t index) {
  return file_label + ": event " + std::to_string(index);
}

const char* type_name(simdjson::dom::element_type type) {
  switch (type) {
    case simdjson::dom::element_type::ARRAY:
      return "an array";
    case simdjson::dom::element_type::OBJECT:
      return "an object";
    case simdjson::dom::element_type::STRING:
      return "a string";
    case simdjson::dom::element_type::BOOL:
      return "a boolean";
    case simdjson::dom::element_type::NULL_VALUE:
      return "null";
    default:
      return "a number";
  }
}

// A pid or tid: Kineto and TF write numbers, torch 1.13 writes "CPU functions" as pid.
std::uint64_t id_value(const simdjson::dom::element& value, std::string* text) {
  std::int64_t number = 0;
  if (value.get_int64().get(number) == simdjson::SUCCESS) {
    if (text != nullptr) *text = std::to_string(number);
    return static_cast<std::uint64_t>(number);
  }
  std::uint64_t unsigned_number = 0;
  if (value.get_uint64().get(unsigned_number) == simdjson::SUCCESS) {
    if (text != nullptr) *text = std::to_string(unsigned_number);
    return unsigned_number;
  }
  std::string_view string;
  if (value.get_string().get(string) == simdjson::SUCCESS) {
    if (text != nullptr) *text = std::string(string);
    return std::hash<std::string_view>{}(string);
  }
  double real = 0;
  if (value.get_double().get(real) == simdjson::SUCCESS) {
    if (text != nullptr) *text = std::to_string(real);
    // A whole number in int64's range is the id the integer would be ("pid": 3.0 is 3, -5.0 is
    // -5); any other double has no integer id (converting it is undefined): its text's hash.
    if (std::trunc(real) == real && real >= -0x1p63 && real < 0x1p63) {
      return static_cast<std::uint64_t>(static_cast<std::int64_t>(real));
    }
    return std::hash<std::string>{}(std::to_string(real));
  }
  return 0;
}

double required_number(const simdjson::dom::element* value, std::string_view key, std::size_t index,
                       const std::string& file_label) {
  if (value == nullptr) {
    throw InvalidInput(where(file_label, index) + ": expected a number \"" + std::string(key) +
                       "\" (µs), found none");
  }
  double number = 0;
  if (value->get_double().get(number) != simdjson::SUCCESS) {
    // Some exporters write numbers as strings ("ts": "1234.5").
    std::string_view text;
    if (value->get_string().get(text) == simdjson::SUCCESS) {
      const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), number);
      if (ec == std::errc() && end == text.data() + text.size()) return number;
    }
    throw InvalidInput(where(file_label, index) + ": expected a number \"" + std::string(key) +
                       "\" (µs), found " + type_name(value->type()));
  }
  return number;
}

}  // namespace

ChromeEventFields parse_chrome_event(const simdjson::dom::element& event, std::size_t index,
                                     const std::string& file_label) {
  simdjson::dom::object object;
  if (event.get_object().get(object) != simdjson::SUCCESS) {
    throw InvalidInput(where(file_label, index) + ": expected an event object, found " +
                       type_name(event.type()));
  }
  ChromeEventFields fields;
  // One pass over the fields: looking each key up scans the object again.
  bool has_phase = false;
  bool has_name = false;
  simdjson::dom::element ts;
  simdjson::dom::element dur;
  bool has_ts = false;
  bool has_dur = false;
  for (const auto field : object) {
    const std::string_view key = field.key;
    if (key == "ph") {
      has_phase = field.value.get_string().get(fields.phase) == simdjson::SUCCESS;
    } else if (key == "name") {
      has_name = field.value.get_string().get(fields.name) == simdjson::SUCCESS;
    } else if (key == "cat") {
      if (field.value.get_string().get(fields.category) != simdjson::SUCCESS) fields.category = {};
    } else if (key == "ts") {
      ts = field.value;
      has_ts = true;
    } else if (key == "dur") {
      dur = field.value;
      has_dur = true;
    } else if (key == "pid") {
      fields.pid = id_value(field.value, &fields.pid_text);
    } else if (key == "tid") {
      fields.tid = id_value(field.value, nullptr);
    } else if (key == "args") {
      fields.has_args = field.value.get_object().get(fields.args) == simdjson::SUCCESS;
    }
  }
  if (!has_phase) {
    throw InvalidInput(where(file_label, index) +
                       ": expected a string \"ph\" (event phase), "
                       "found none or another type");
  }
  if (fields.phase != "X") return fields;
  if (!has_name) {
    throw InvalidInput(where(file_label, index) +
                       ": expected a string \"name\" in an X event, found none or another type");
  }
  fields.ts_us = required_number(has_ts ? &ts : nullptr, "ts", index, file_label);
  fields.dur_us = required_number(has_dur ? &dur : nullptr, "dur", index, file_label);
  return fields;
}

std::optional<std::int64_t> integer_arg(const ChromeEventFields& fields, std::string_view key) {
  if (!fields.has_args) return std::nullopt;
  simdjson::dom::element value;
  if (fields.args[key].get(value) != simdjson::SUCCESS) return std::nullopt;
  std::int64_t number = 0;
  if (value.get_int64().get(number) == simdjson::SUCCESS) return number;
  std::string_view text;
  if (value.get_string().get(text) == simdjson::SUCCESS) {
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), number);
    if (ec == std::errc() && end == text.data() + text.size()) return number;
  }
  return std::nullopt;
}

std::string_view string_arg(const ChromeEventFields& fields, std::string_view key) {
  if (!fields.has_args) return {};
  std::string_view text;
  if (fields.args[key].get_string().get(text) != simdjson::SUCCESS) return {};
  return text;
}

}  // namespace nnergy::account
