#pragma once

#include <string>
#include <string_view>

namespace nnergy::report {

/// `value` (SI base unit) with an SI prefix and three significant digits:
/// (0.00802, "J") → "8.02 mJ"; (2.62e11, "FLOP") → "262 GFLOP"; 0 → "0 J".
std::string format_quantity(double value, std::string_view unit);

/// `value` with three significant digits, no prefix: 0.2504 → "0.250", 1234.5 → "1234".
std::string format_significant(double value);

/// `bytes` with a binary prefix (KiB, MiB, GiB, TiB, PiB: powers of 1024) and three significant
/// digits: 1.3e10 → "12.1 GiB"; 512 → "512 B".
std::string format_binary_bytes(double bytes);

}  // namespace nnergy::report
