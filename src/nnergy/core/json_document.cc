#include "nnergy/core/json_document.h"

#include <fmt/format.h>

#include <vector>

#include "nnergy/core/error.h"

namespace nnergy::core {
namespace {

template <typename Json>
std::string compact_text(const Json& scalar) {
  return scalar.dump(-1, ' ', false, Json::error_handler_t::replace);
}

// `text` cut to at most `limit` bytes at a UTF-8 character boundary, with "..." when cut.
std::string bounded(std::string text, std::size_t limit) {
  if (text.size() <= limit) return text;
  std::size_t end = limit;
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  text.resize(end);
  return text + "...";
}

// A scalar's JSON text; a long string is escaped only as far as a description quotes it.
template <typename Json>
std::string scalar_text(const Json& value) {
  if (value.is_string()) {
    const auto& s = value.template get_ref<const typename Json::string_t&>();
    if (s.size() > kJsonDescriptionChars) {
      return compact_text(Json(s.substr(0, kJsonDescriptionChars + 1)));
    }
  }
  return compact_text(value);
}

// The first `limit` bytes (or a little more) of `value`'s compact JSON text, written with an
// explicit stack rather than nlohmann's recursive dump(), and stopping once `limit` is passed.
template <typename Json>
std::string compact_prefix(const Json& value, std::size_t limit) {
  struct Level {
    typename Json::const_iterator next;
    typename Json::const_iterator end;
    bool object;
    bool first;
  };
  std::string out;
  std::vector<Level> stack;
  const auto open = [&](const Json& v) {
    if (v.is_object() || v.is_array()) {
      out += v.is_object() ? '{' : '[';
      stack.push_back({v.cbegin(), v.cend(), v.is_object(), true});
    } else {
      out += scalar_text(v);
    }
  };
  open(value);
  while (!stack.empty() && out.size() <= limit) {
    Level& top = stack.back();
    if (top.next == top.end) {
      out += top.object ? '}' : ']';
      stack.pop_back();
      continue;
    }
    const auto item = top.next++;
    if (!top.first) out += ',';
    top.first = false;
    if (top.object) out += scalar_text(Json(item.key())) + ":";
    open(*item);  // may grow `stack`: `top` is not used after this
  }
  return out;
}

template <typename Json>
std::string describe(const Json& value) {
  const std::string text =
      bounded(compact_prefix(value, kJsonDescriptionChars), kJsonDescriptionChars);
  if (value.is_array()) {
    return fmt::format("an array of {} element{}: {}", value.size(), value.size() == 1 ? "" : "s",
                       text);
  }
  if (value.is_object()) {
    return fmt::format("an object of {} key{}: {}", value.size(), value.size() == 1 ? "" : "s",
                       text);
  }
  return text;
}

}  // namespace

void check_json_depth(std::string_view text, std::string_view origin) {
  std::size_t depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;  // the escaped character, a quote or a backslash included, ends nothing
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxJsonDepth) {
        throw InvalidInput(fmt::format(
            "{}: JSON nested deeper than {} levels at byte {}; expected a flat document "
            "(nnergy's files nest arrays and objects about 10 levels deep); check that this is "
            "the file you meant, or flatten it",
            origin, kMaxJsonDepth, i + 1));
      }
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
}

nlohmann::json parse_json_document(std::string_view text, std::string_view origin) {
  check_json_depth(text, origin);
  return nlohmann::json::parse(text.begin(), text.end());
}

nlohmann::ordered_json parse_ordered_json_document(std::string_view text, std::string_view origin) {
  check_json_depth(text, origin);
  return nlohmann::ordered_json::parse(text.begin(), text.end());
}

std::string describe_json_value(const nlohmann::json& value) { return describe(value); }

std::string describe_json_value(const nlohmann::ordered_json& value) { return describe(value); }

}  // namespace nnergy::core
