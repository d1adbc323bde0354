#include "nnergy/core/run_context.h"

#include <fmt/format.h>

#include <chrono>
#include <ctime>

#include "nnergy/core/version.h"

namespace nnergy {

RunContext RunContext::now(std::string command_line) {
  RunContext context;
  context.command_line = std::move(command_line);
  const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm utc{};
  gmtime_r(&t, &utc);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%SZ", &utc);
  context.date_utc = buffer;
  return context;
}

RunContext& RunContext::add(std::string key, nlohmann::ordered_json value) {
  fields.emplace_back(std::move(key), std::move(value));
  return *this;
}

nlohmann::ordered_json RunContext::to_json() const {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  j["tool"] = "nnergy";
  j["tool_version"] = kToolVersion;
  j["schema_version"] = kOutputSchemaVersion;
  j["command_line"] = command_line;
  j["date_utc"] = date_utc;
  for (const auto& [key, value] : fields) j[key] = value;
  return j;
}

namespace {

// One "# key: value" line; line breaks in a value (a command line, a note) become spaces so that
// the value stays on its comment line.
std::string comment_line(const std::string& key, const nlohmann::ordered_json& value) {
  std::string text = value.is_string() ? value.get<std::string>() : value.dump();
  for (char& c : text) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  return fmt::format("# {}: {}\n", key, text);
}

}  // namespace

std::string RunContext::to_csv_comments() const {
  std::string out;
  const nlohmann::ordered_json j = to_json();
  // Keep the insertion order of the fixed keys first, then the fields.
  for (const char* key : {"tool", "tool_version", "schema_version", "command_line", "date_utc"}) {
    out += comment_line(key, j.at(key));
  }
  for (const auto& [key, value] : fields) out += comment_line(key, value);
  return out;
}

}  // namespace nnergy
