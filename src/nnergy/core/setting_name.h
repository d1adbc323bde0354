#pragma once

#include <string>
#include <string_view>

namespace nnergy {

/// How a front end names a request's settings in the messages the library writes: the CLI as
/// its flags (`power_limit_w` → "--power-limit-w"), Python as keyword arguments
/// (`power_limit_w`). Library code never spells a flag; it names the setting through this.
enum class SettingNames { kKeyword, kFlag };

/// `setting` (snake_case, as the request field is named) as `names` spells it.
std::string setting_name(SettingNames names, std::string_view setting);

/// `setting` with the value it was given, as a message quotes it: "--batch 0" (flags) or
/// "batch=0" (keywords).
std::string setting_with_value(SettingNames names, std::string_view setting,
                               std::string_view value);

/// A setting whose flag is not its keyword (`json_file` ↔ "--output", `dims` ↔ "--dim"): the
/// keyword, or `flag` (snake_case) as a flag.
std::string setting_name(SettingNames names, std::string_view keyword, std::string_view flag);

/// One entry of a mapping setting as a message quotes it: "--dim seq=128" (flags) or
/// "dims['seq']=128" (keywords; `value` in quotes too when `quote_value`, for a string).
std::string setting_entry(SettingNames names, std::string_view keyword, std::string_view flag,
                          std::string_view key, std::string_view value, bool quote_value = false);

}  // namespace nnergy
