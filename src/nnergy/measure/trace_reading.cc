#include "nnergy/measure/trace_reading.h"

#include <algorithm>
#include <charconv>
#include <system_error>

namespace nnergy::measure {

std::string format_number(double value) { return fmt::format("{}", value); }

std::string format_optional(const std::optional<double>& value) {
  return value ? format_number(*value) : std::string();
}

std::optional<double> parse_number(std::string_view text) {
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

std::optional<std::uint64_t> parse_bits(std::string_view text) {
  const bool hex = text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X');
  if (hex) text.remove_prefix(2);
  std::uint64_t value = 0;
  const auto [end, ec] =
      std::from_chars(text.data(), text.data() + text.size(), value, hex ? 16 : 10);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

std::string place_list(const std::vector<std::string>& places) {
  constexpr std::size_t kListedLines = 10;
  constexpr std::string_view kLine = "line ";
  const bool all_lines = std::all_of(places.begin(), places.end(),
                                     [&](const std::string& p) { return p.rfind(kLine, 0) == 0; });
  std::string list = all_lines ? (places.size() == 1 ? "line " : "lines ") : "";
  for (std::size_t i = 0; i < places.size() && i < kListedLines; ++i) {
    if (i != 0) list += ", ";
    list += all_lines ? places[i].substr(kLine.size()) : places[i];
  }
  if (places.size() > kListedLines) list += ", ...";
  return list;
}

Lines split_lines(const std::string& text) {
  Lines result;
  std::size_t begin = 0;
  std::size_t number = 1;
  while (begin < text.size()) {
    const auto end = text.find('\n', begin);
    std::string_view line(text.data() + begin,
                          (end == std::string::npos ? text.size() : end) - begin);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    result.lines.push_back({number++, line});
    if (end == std::string::npos) {
      result.last_has_newline = false;
      break;
    }
    begin = end + 1;
  }
  return result;
}
}  // namespace nnergy::measure
