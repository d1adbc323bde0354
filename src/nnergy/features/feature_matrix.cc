#include "nnergy/features/feature_matrix.h"

#include <algorithm>

#include "nnergy/core/error.h"

namespace nnergy::features {

std::size_t FeatureMatrix::column(const std::string& name) const {
  const auto it = std::find(names.begin(), names.end(), name);
  if (it == names.end()) {
    throw InvalidInput("feature matrix: no column '" + name + "'");
  }
  return static_cast<std::size_t>(it - names.begin());
}

void FeatureMatrix::add_row(std::span<const double> row, std::string family) {
  if (row.size() != columns()) {
    throw InternalError("feature matrix: row of " + std::to_string(row.size()) + " values for " +
                        std::to_string(columns()) + " columns");
  }
  values.insert(values.end(), row.begin(), row.end());
  families.push_back(std::move(family));
}

FeatureMatrix FeatureMatrix::select(std::span<const std::size_t> indices) const {
  FeatureMatrix out;
  out.names = names;
  out.values.reserve(indices.size() * columns());
  out.families.reserve(indices.size());
  for (const std::size_t i : indices) {
    const auto r = row(i);
    out.values.insert(out.values.end(), r.begin(), r.end());
    out.families.push_back(families.at(i));
  }
  return out;
}

}  // namespace nnergy::features
