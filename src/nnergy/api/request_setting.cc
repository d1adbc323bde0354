#include "nnergy/api/request_setting.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <type_traits>

#include "nnergy/core/error.h"

namespace nnergy::api {

std::string_view describe(SettingType type) {
  switch (type) {
    case SettingType::kSwitch:
      return "a switch (True or False)";
    case SettingType::kInteger:
      return "an integer";
    case SettingType::kNumber:
      return "a number";
    case SettingType::kText:
      return "a text";
    case SettingType::kBindings:
      return "NAME=INTEGER bindings";
  }
  return "a value";
}

namespace {

template <SettingType type, class T>
constexpr bool holds_at =
    std::is_same_v<std::variant_alternative_t<static_cast<std::size_t>(type), SettingValue>, T>;
static_assert(holds_at<SettingType::kSwitch, bool> &&
              holds_at<SettingType::kInteger, std::int64_t> &&
              holds_at<SettingType::kNumber, double> && holds_at<SettingType::kText, std::string> &&
              holds_at<SettingType::kBindings, std::map<std::string, std::int64_t>>);

SettingType type_of(const SettingValue& value) {
  return static_cast<SettingType>(value.index());  // the alternatives in SettingType's order
}

}  // namespace

void check_setting_type(SettingType type, const SettingValue& value, SettingNames names,
                        std::string_view keyword) {
  if (type_of(value) == type) return;
  throw InvalidInput(fmt::format("{}: expected {}, found {}", setting_name(names, keyword),
                                 describe(type), describe(type_of(value))));
}

SettingValue parse_setting_text(SettingType type, const std::string& text, SettingNames names,
                                std::string_view keyword) {
  const char* first = text.data();
  const char* last = text.data() + text.size();
  switch (type) {
    case SettingType::kInteger: {
      std::int64_t value = 0;
      const auto [end, error] = std::from_chars(first, last, value);
      if (error == std::errc() && end == last && !text.empty()) return value;
      break;
    }
    case SettingType::kNumber: {
      double value = 0;
      const auto [end, error] = std::from_chars(first, last, value);
      if (error == std::errc() && end == last && !text.empty() && std::isfinite(value)) {
        return value;
      }
      break;
    }
    case SettingType::kText:
      return text;
    case SettingType::kSwitch:
    case SettingType::kBindings:
      throw InternalError(fmt::format("{}: {} is not read from one text", keyword, describe(type)));
  }
  throw InvalidInput(
      fmt::format("{}: expected {}", setting_with_value(names, keyword, text), describe(type)));
}

}  // namespace nnergy::api
