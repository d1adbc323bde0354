#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

namespace nnergy {

/// Version of the layout of nnergy's JSON and CSV outputs; bumped on incompatible changes.
inline constexpr int kOutputSchemaVersion = 2;

/// The context block every output carries: what made it, when, from what.
struct RunContext {
  std::string command_line;
  std::string date_utc;  ///< ISO 8601, e.g. "2026-11-22T01:58:02Z"
  /// Further key/value pairs in order (device, predictor, clock_mhz, batch, mode, ...).
  std::vector<std::pair<std::string, nlohmann::ordered_json>> fields;

  /// Context with the tool version, schema version, `command_line` and the current date.
  static RunContext now(std::string command_line);
  /// Appends a field.
  RunContext& add(std::string key, nlohmann::ordered_json value);
  /// {"tool": "nnergy", "tool_version": ..., "schema_version": ..., ...fields}.
  nlohmann::ordered_json to_json() const;
  /// The same as "# key: value" lines, for the top of a CSV file (pandas: comment='#').
  std::string to_csv_comments() const;
};

}  // namespace nnergy
