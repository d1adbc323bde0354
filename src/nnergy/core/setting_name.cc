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

}  // namespace nnergy
