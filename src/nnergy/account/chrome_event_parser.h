#pragma once

#include <simdjson.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace nnergy::account {

/// The fields common to Chrome-trace-format events (Kineto, torch 1.13, TF timelines), read with
/// messages that name the file, the event's index and the field. Internal to the trace readers.
struct ChromeEventFields {
  std::string_view phase;      ///< "X", "M", "C", ...
  std::string_view name;       ///< empty when absent
  std::string_view category;   ///< "cat", empty when absent
  double ts_us = 0;            ///< "ts", µs (0 when absent and not required)
  double dur_us = 0;           ///< "dur", µs
  std::uint64_t pid = 0;       ///< number, or a hash of a string pid
  std::string pid_text;        ///< pid as written ("CPU functions", "0")
  std::uint64_t tid = 0;       ///< number, or a hash of a string tid
  simdjson::dom::object args;  ///< empty object when absent
  bool has_args = false;
};

/// Reads the fields of `event` (index `index` of `file_label`). For "X" events name, ts and dur
/// are required; a missing or mistyped one throws InvalidInput naming the event and the field.
ChromeEventFields parse_chrome_event(const simdjson::dom::element& event, std::size_t index,
                                     const std::string& file_label);

/// args[key] as an integer (number or numeric string), or nothing.
std::optional<std::int64_t> integer_arg(const ChromeEventFields& fields, std::string_view key);
/// args[key] as a string, or empty; a view into the batch being read (intern it to keep it).
std::string_view string_arg(const ChromeEventFields& fields, std::string_view key);

}  // namespace nnergy::account
