#include "nnergy/report/run_context.h"

#include <fmt/format.h>

#include <chrono>
#include <ctime>

#include "nnergy/core/version.h"

namespace nnergy::report {

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

std::string RunContext::to_csv_comments() const {
  std::string out;
  const nlohmann::ordered_json j = to_json();
  // Keep the insertion order of the fixed keys first, then the fields.
  for (const char* key : {"tool", "tool_version", "schema_version", "command_line", "date_utc"}) {
    const nlohmann::ordered_json& v = j.at(key);
    out += fmt::format("# {}: {}\n", key, v.is_string() ? v.get<std::string>() : v.dump());
  }
  for (const auto& [key, value] : fields) {
    out +=
        fmt::format("# {}: {}\n", key, value.is_string() ? value.get<std::string>() : value.dump());
  }
  return out;
}

}  // namespace nnergy::report
