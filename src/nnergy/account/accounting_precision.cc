#include "nnergy/account/accounting_precision.h"

#include <limits>

#include "nnergy/core/error.h"

namespace nnergy::account {

double similarity_or_nan(const Footprint& a, const Footprint& b) {
  try {
    return accounting_similarity(a, b);
  } catch (const InvalidInput&) {
    return std::numeric_limits<double>::quiet_NaN();
  }
}

std::vector<SparsingPoint> sparsing_similarity(const AccountRun& run, const SweepOptions& options,
                                               const std::vector<SummarizeRule>& rules,
                                               std::size_t max_factor) {
  const Footprint reference = summarize(
      tensor_energy_footprint(run.events, account_energy(run.events, run.power, options)), rules);
  std::vector<SparsingPoint> points;
  for (std::size_t factor = 2; factor <= max_factor; ++factor) {
    std::vector<PowerTimeline> sparse;
    for (const PowerTimeline& timeline : run.power) sparse.push_back(decimate(timeline, factor));
    const Footprint stef = summarize(
        tensor_energy_footprint(run.events, account_energy(run.events, sparse, options)), rules);
    points.push_back({factor, similarity_or_nan(reference, stef)});
  }
  return points;
}

std::vector<double> widening_similarity(const std::vector<Footprint>& stefs) {
  std::vector<double> result;
  for (std::size_t k = 2; k <= stefs.size(); ++k) {
    const std::vector<Footprint> first_k(stefs.begin(), stefs.begin() + static_cast<long>(k));
    result.push_back(similarity_or_nan(stefs.front(), merge_footprints(first_k)));
  }
  return result;
}

std::vector<std::vector<double>> pairwise_similarity(const std::vector<Footprint>& stefs) {
  std::vector<std::vector<double>> matrix(stefs.size(), std::vector<double>(stefs.size()));
  for (std::size_t i = 0; i < stefs.size(); ++i) {
    for (std::size_t j = 0; j < stefs.size(); ++j) {
      matrix[i][j] = similarity_or_nan(stefs[i], stefs[j]);
    }
  }
  return matrix;
}

}  // namespace nnergy::account
