#include "nnergy/core/setting_name.h"

namespace nnergy {

std::string setting_name(SettingNames names, std::string_view setting) {
  if (names == SettingNames::kKeyword) return std::string(setting);
  std::string flag = "--";
  for (char c : setting) flag += c == '_' ? '-' : c;
  return flag;
}

std::string setting_with_value(SettingNames names, std::string_view setting,
                               std::string_view value) {
  return setting_name(names, setting) + (names == SettingNames::kFlag ? " " : "=") +
         std::string(value);
}

std::string setting_name(SettingNames names, std::string_view keyword, std::string_view flag) {
  return names == SettingNames::kFlag ? setting_name(names, flag) : std::string(keyword);
}

std::string setting_entry(SettingNames names, std::string_view keyword, std::string_view flag,
                          std::string_view key, std::string_view value, bool quote_value) {
  if (names == SettingNames::kFlag)
    return setting_name(names, flag) + " " + std::string(key) + "=" + std::string(value);
  const std::string quote = quote_value ? "'" : "";
  return std::string(keyword) + "['" + std::string(key) + "']=" + quote + std::string(value) +
         quote;
}

}  // namespace nnergy
