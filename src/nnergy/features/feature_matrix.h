#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <vector>

namespace nnergy::features {

/// Rows of named numeric features, the input of every Regressor. Row-major; one row per
/// (op, mode, device, clock, dtype). `families` holds each row's op family (the ONNX op type,
/// e.g. "Conv"), which per-family models such as poly-lasso split on. Plain data: not
/// thread-safe to modify, safe to read from several threads.
struct FeatureMatrix {
  std::vector<std::string> names;     ///< column names, with units, e.g. "flop_count"
  std::vector<double> values;         ///< rows() × names.size(), row-major
  std::vector<std::string> families;  ///< op family of each row

  std::size_t columns() const { return names.size(); }
  std::size_t rows() const { return families.size(); }
  /// Row `i` (i < rows()).
  std::span<const double> row(std::size_t i) const {
    return {values.data() + i * columns(), columns()};
  }
  /// Index of the column called `name`; throws InvalidInput naming it when there is none.
  std::size_t column(const std::string& name) const;
  /// Appends one row; throws InternalError when `row` has the wrong length.
  void add_row(std::span<const double> row, std::string family);
  /// The rows at `indices`, in that order, with the same columns.
  FeatureMatrix select(std::span<const std::size_t> indices) const;
};

}  // namespace nnergy::features
