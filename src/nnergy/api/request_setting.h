#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <variant>

#include "nnergy/core/registry.h"
#include "nnergy/core/setting_name.h"

namespace nnergy::api {

/// What kind of value a setting takes. The CLI turns it into an option or a flag, the Python
/// binding into the type of a keyword argument.
enum class SettingType {
  kSwitch,    ///< on or off (a CLI flag without value; a Python bool)
  kInteger,   ///< a whole number
  kNumber,    ///< a real number
  kText,      ///< a word, a name, a path, or a list written as text
  kBindings,  ///< NAME=INTEGER pairs (CLI: a repeatable NAME=VALUE option; Python: a dict)
};

/// A type as messages name it: "a switch (True or False)", "an integer", "a number", "a text",
/// "NAME=INTEGER bindings".
std::string_view describe(SettingType type);

/// A setting's value as a front end hands it over, already of the setting's type. The
/// alternatives are in SettingType's order, so that a value's index is its type.
using SettingValue =
    std::variant<bool, std::int64_t, double, std::string, std::map<std::string, std::int64_t>>;

/// One setting of a request, declared once. The table of a request (a Registry: the keyword is
/// the entry's name, the help its summary) is what the CLI makes its options from, what the
/// Python binding accepts as keyword arguments, and what the Python wrapper's signature and
/// documentation show; adding a setting is one entry in the table plus the request field it
/// fills. The keyword is the request field's name and the name messages use
/// (core/setting_name.h spells it as the front end does).
template <class Request>
struct RequestSetting {
  std::string flag;  ///< the CLI's spelling, "--power-limit-w"
  SettingType type = SettingType::kText;
  std::string default_text;  ///< the default as help shows it; "" when none or request-dependent
  /// Stores `value` (of `type`) into the request, parsing texts; a bad value is InvalidInput
  /// naming the setting as the request's `names` spell it.
  void (*apply)(Request& request, const SettingValue& value) = nullptr;
};

/// The settings of a request, by keyword, in the order help lists them.
template <class Request>
using SettingTable = Registry<RequestSetting<Request>>;

/// Checks that `value` holds `type`'s alternative; InvalidInput naming the setting ("batch:
/// expected an integer, found a text") otherwise.
void check_setting_type(SettingType type, const SettingValue& value, SettingNames names,
                        std::string_view keyword);

/// Reads a command-line text as `type`: "8" → 8 for an integer, "1.5" → 1.5 for a number, the
/// text itself for a text; InvalidInput "--batch abc: expected an integer" otherwise. (Switches
/// and bindings have options of their own.)
SettingValue parse_setting_text(SettingType type, const std::string& text, SettingNames names,
                                std::string_view keyword);

}  // namespace nnergy::api
