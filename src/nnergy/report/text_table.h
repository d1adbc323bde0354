#pragma once

#include <string>
#include <vector>

namespace nnergy::report {

/// A plain-text table with aligned columns, for terminal output.
class TextTable {
 public:
  enum class Align { kLeft, kRight };

  /// Adds a column; all columns are added before the first row.
  void add_column(std::string header, Align align);
  /// Adds a row with one cell per column.
  void add_row(std::vector<std::string> cells);
  /// The table, header first, two spaces between columns, each line ending in '\n'.
  std::string render() const;

 private:
  std::vector<std::string> headers_;
  std::vector<Align> aligns_;
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace nnergy::report
