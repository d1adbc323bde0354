#pragma once

#include <string>
#include <string_view>

namespace nnergy::report {

/// `value` (SI base unit) with an SI prefix and three significant digits:
/// (0.00802, "J") → "8.02 mJ"; (2.62e11, "FLOP") → "262 GFLOP"; 0 → "0 J".
std::string format_quantity(double value, std::string_view unit);

/// `value` with three significant digits, no prefix: 0.2504 → "0.250", 1234.5 → "1234".
std::string format_significant(double value);

}  // namespace nnergy::report
