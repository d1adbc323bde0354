#pragma once

#include <string>
#include <string_view>
#include <vector>

/// The one CSV dialect of every file nnergy writes and reads back: RFC 4180 quoting, "#" lines
/// at the top for the context block (pandas: `read_csv(path, comment="#")`).
namespace nnergy::csv {

/// One cell: `text` as it is, or double-quoted with inner quotes doubled when it holds a comma,
/// a quote, a line break or a "#" (pandas' comment='#' would otherwise cut the line there). A
/// text that a spreadsheet would run as a formula (starting with =, +, -, @, tab or CR, and not
/// a number) is prefixed with a single quote, as OWASP recommends against CSV injection.
std::string field(std::string_view text);

/// The cells of one CSV line; a cell may be double-quoted with "" for a quote inside. Cells are
/// returned as written (not trimmed); an empty line gives one empty cell.
std::vector<std::string> split_line(std::string_view line);

}  // namespace nnergy::csv
