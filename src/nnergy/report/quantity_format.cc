#include "nnergy/report/quantity_format.h"

#include <fmt/format.h>

#include <cmath>
#include <iterator>

namespace nnergy::report {

std::string format_significant(double value) {
  if (value == 0 || !std::isfinite(value)) return fmt::format("{:g}", value);
  int magnitude = static_cast<int>(std::floor(std::log10(std::fabs(value))));
  // Rounding to three digits can carry into the next decade (0.9997 → 1.00).
  const double unit = std::pow(10.0, magnitude - 2);
  if (std::fabs(std::round(value / unit) * unit) >= std::pow(10.0, magnitude + 1)) ++magnitude;
  const int decimals = std::max(0, 2 - magnitude);
  return fmt::format("{:.{}f}", value, decimals);
}

std::string format_quantity(double value, std::string_view unit) {
  struct Prefix {
    double scale;
    const char* symbol;
  };
  static constexpr Prefix kPrefixes[] = {{1e15, "P"}, {1e12, "T"}, {1e9, "G"},  {1e6, "M"},
                                         {1e3, "k"},  {1, ""},     {1e-3, "m"}, {1e-6, "µ"},
                                         {1e-9, "n"}, {1e-12, "p"}};
  if (value == 0 || !std::isfinite(value)) return fmt::format("{:g} {}", value, unit);
  const double magnitude = std::fabs(value);
  for (const Prefix& p : kPrefixes) {
    // 0.9995 rather than 1 so that 999.6 rounds up to "1.00 k" instead of printing "1000".
    if (magnitude >= p.scale * 0.9995) {
      return format_significant(value / p.scale) + " " + p.symbol + std::string(unit);
    }
  }
  return fmt::format("{:g} {}", value, unit);
}

std::string format_binary_bytes(double bytes) {
  static constexpr const char* kPrefixes[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
  if (bytes == 0 || !std::isfinite(bytes)) return fmt::format("{:g} B", bytes);
  double value = bytes;
  std::size_t prefix = 0;
  // 1023.5 rather than 1024 so that a value that rounds to "1024" moves to the next prefix.
  while (std::fabs(value) >= 1023.5 && prefix + 1 < std::size(kPrefixes)) {
    value /= 1024.0;
    ++prefix;
  }
  return format_significant(value) + " " + kPrefixes[prefix] + "B";
}

}  // namespace nnergy::report
