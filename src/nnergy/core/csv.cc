#include "nnergy/core/csv.h"

#include <cstdlib>

namespace nnergy::csv {

namespace {

// Whether a spreadsheet would run `text` as a formula: it starts with =, +, -, @, tab or CR and
// is not a plain number ("-1.5", "+3e-4" stay as they are).
bool formula_like(std::string_view text) {
  if (text.empty() || std::string_view("=+-@\t\r").find(text.front()) == std::string_view::npos) {
    return false;
  }
  const std::string copy(text);
  char* end = nullptr;
  std::strtod(copy.c_str(), &end);
  return end != copy.c_str() + copy.size() || copy.size() == 1;
}

}  // namespace

std::string field(std::string_view text) {
  const std::string neutral = formula_like(text) ? "'" + std::string(text) : std::string(text);
  if (neutral.find_first_of(",\"\r\n#") == std::string::npos) return neutral;
  std::string quoted = "\"";
  for (char c : neutral) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  return quoted + "\"";
}

std::vector<std::string> split_line(std::string_view line) {
  std::vector<std::string> cells(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        cells.back() += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        cells.back() += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      cells.emplace_back();
    } else {
      cells.back() += c;
    }
  }
  return cells;
}

}  // namespace nnergy::csv
