#include "nnergy/measure/trace_reading.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <system_error>

#include "nnergy/core/error.h"

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

void TraceCollector::add(std::size_t source, PowerSample sample, const std::string& place) {
  auto& last = last_time_[source];
  if (last && !(sample.time_s > last->first)) {
    const bool equal = sample.time_s == last->first;
    throw InvalidInput(fmt::format(
        "{}: {}: {} timestamp of source '{}' ({} s): expected a time after the previous "
        "sample's at {} ({} s); traces need strictly increasing timestamps",
        file_, place, equal ? "duplicated" : "non-monotonic", traces_[source].info.id,
        format_number(sample.time_s), last->second, format_number(last->first)));
  }
  last = std::make_pair(sample.time_s, place);
  if (sample.power_w && std::isnan(*sample.power_w)) sample.power_w.reset();
  if (sample.energy_j && std::isnan(*sample.energy_j)) sample.energy_j.reset();
  if (!sample.power_w && !sample.energy_j) {
    dropped_.push_back(place);
    return;
  }
  traces_[source].samples.push_back(std::move(sample));
}

std::vector<PowerTrace> TraceCollector::finish(TraceWarnings* warnings,
                                               const std::string& dropped_what) {
  if (!dropped_.empty()) {
    messages_.insert(
        messages_.begin(),
        fmt::format("{}: {} row{} with {} dropped ({})", file_, dropped_.size(),
                    dropped_.size() == 1 ? "" : "s", dropped_what, place_list(dropped_)));
  }
  std::vector<PowerTrace> usable;
  for (PowerTrace& trace : traces_) {
    if (trace.samples.empty()) {
      messages_.push_back(fmt::format("{}: source '{}' has no usable samples and is omitted", file_,
                                      trace.info.id));
    } else {
      usable.push_back(std::move(trace));
    }
  }
  if (usable.empty()) {
    std::string why;
    for (const std::string& m : messages_) why += (why.empty() ? " (" : "; ") + m;
    if (!why.empty()) why += ")";
    throw InvalidInput(file_ +
                       ": no usable samples: expected at least one row with a power or "
                       "energy reading" +
                       why);
  }
  if (warnings != nullptr) {
    for (std::string& m : messages_) warnings->messages.push_back(std::move(m));
  }
  return usable;
}

}  // namespace nnergy::measure
