#include "nnergy/graph/node.h"

#include <fmt/format.h>

#include <type_traits>

namespace nnergy::graph {

std::string to_string(const AttributeValue& value) {
  return std::visit(
      [](const auto& v) -> std::string {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::int64_t>) {
          return std::to_string(v);
        } else if constexpr (std::is_same_v<T, double>) {
          return fmt::format("{:g}", v);
        } else if constexpr (std::is_same_v<T, std::string>) {
          return "'" + v + "'";
        } else {
          std::string text = "[";
          for (std::size_t i = 0; i < v.size(); ++i) {
            if (i > 0) text += ", ";
            text += fmt::format("{}", v[i]);
          }
          return text + "]";
        }
      },
      value);
}

std::int64_t Node::int_attribute(const std::string& key, std::int64_t fallback) const {
  auto it = attributes.find(key);
  if (it == attributes.end()) return fallback;
  if (const auto* v = std::get_if<std::int64_t>(&it->second)) return *v;
  return fallback;
}

std::vector<std::int64_t> Node::ints_attribute(const std::string& key,
                                               std::vector<std::int64_t> fallback) const {
  auto it = attributes.find(key);
  if (it == attributes.end()) return fallback;
  if (const auto* v = std::get_if<std::vector<std::int64_t>>(&it->second)) return *v;
  return fallback;
}

std::string Node::string_attribute(const std::string& key, const std::string& fallback) const {
  auto it = attributes.find(key);
  if (it == attributes.end()) return fallback;
  if (const auto* v = std::get_if<std::string>(&it->second)) return *v;
  return fallback;
}

}  // namespace nnergy::graph
