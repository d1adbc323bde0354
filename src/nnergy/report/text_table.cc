#include "nnergy/report/text_table.h"

#include <algorithm>

#include "nnergy/core/error.h"
#include "nnergy/core/text.h"

namespace nnergy::report {

namespace {

// Display width in code points (UTF-8 continuation bytes take no column).
std::size_t display_width(const std::string& text) {
  return static_cast<std::size_t>(
      std::count_if(text.begin(), text.end(), [](char c) { return (c & 0xC0) != 0x80; }));
}

}  // namespace

void TextTable::add_column(std::string header, Align align) {
  headers_.push_back(std::move(header));
  aligns_.push_back(align);
}

void TextTable::add_row(std::vector<std::string> cells) {
  if (cells.size() != headers_.size()) throw InternalError("TextTable: row width != column count");
  // Cells carry names from users' files: no escape sequence reaches the terminal.
  for (std::string& cell : cells) cell = escape_control_characters(cell);
  rows_.push_back(std::move(cells));
}

std::string TextTable::render() const {
  std::vector<std::size_t> widths(headers_.size());
  for (std::size_t c = 0; c < headers_.size(); ++c) widths[c] = display_width(headers_[c]);
  for (const auto& row : rows_) {
    for (std::size_t c = 0; c < row.size(); ++c)
      widths[c] = std::max(widths[c], display_width(row[c]));
  }
  auto line = [&](const std::vector<std::string>& cells) {
    std::string out;
    for (std::size_t c = 0; c < cells.size(); ++c) {
      const std::string pad(widths[c] - display_width(cells[c]), ' ');
      if (c > 0) out += "  ";
      out += aligns_[c] == Align::kRight ? pad + cells[c]
                                         : cells[c] + (c + 1 < cells.size() ? pad : "");
    }
    return out + "\n";
  };
  std::string out = line(headers_);
  for (const auto& row : rows_) out += line(row);
  return out;
}

}  // namespace nnergy::report
