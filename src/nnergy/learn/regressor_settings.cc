#include "nnergy/learn/regressor_settings.h"

#include <fmt/format.h>

#include "nnergy/core/error.h"

namespace nnergy::learn {

nlohmann::json parse_regressor_settings(const std::vector<std::string>& items,
                                        const std::string& flag) {
  nlohmann::json settings = nlohmann::json::object();
  for (const std::string& item : items) {
    const std::size_t equals = item.find('=');
    if (equals == std::string::npos || equals == 0) {
      throw InvalidInput(
          fmt::format("{} '{}': expected KEY=VALUE, e.g. {} max_depth=8", flag, item, flag));
    }
    const std::string key = item.substr(0, equals);
    const std::string text = item.substr(equals + 1);
    if (settings.contains(key)) {
      throw InvalidInput(fmt::format("{} '{}': {} is set twice", flag, item, key));
    }
    nlohmann::json value = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    // Objects, arrays and null are not settings any regressor takes; keep them as the text the
    // user wrote, so that the regressor's own message shows it.
    if (value.is_discarded() || value.is_object() || value.is_array() || value.is_null()) {
      value = text;
    }
    settings[key] = std::move(value);
  }
  return settings;
}

nlohmann::json settings_for_target(const nlohmann::json& settings, const std::string& target) {
  nlohmann::json out = settings.is_object() ? settings : nlohmann::json::object();
  out["target"] = target;
  return out;
}

}  // namespace nnergy::learn
