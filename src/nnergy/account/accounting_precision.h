#pragma once

#include <cstddef>
#include <vector>

#include "nnergy/account/account_run.h"
#include "nnergy/account/footprint.h"

namespace nnergy::account {

/// Accounting similarity under sample sparsing (ASSS, seed 001 §5.4.1) at one decimation factor.
struct SparsingPoint {
  std::size_t factor = 1;  ///< every factor-th power sample kept
  double similarity = 0;   ///< PCC of the STEFs with all samples and with 1/factor; NaN: undefined
};

/// ASSS for factors 2..max_factor: the STEF (summarized with `rules`) of `run` with its power
/// timelines decimated, correlated with the STEF at full rate.
std::vector<SparsingPoint> sparsing_similarity(const AccountRun& run, const SweepOptions& options,
                                               const std::vector<SummarizeRule>& rules,
                                               std::size_t max_factor);

/// ASSW (seed 001 §5.4.1): element k−2 is the similarity of run 1's STEF with the STEF of runs
/// 1..k merged, k = 2..n. NaN where undefined.
std::vector<double> widening_similarity(const std::vector<Footprint>& stefs);

/// Accounting similarity of every pair of runs (seed 001 §5.4.2, Fig. 8); NaN where undefined.
std::vector<std::vector<double>> pairwise_similarity(const std::vector<Footprint>& stefs);

/// accounting_similarity, NaN instead of an exception where the PCC is undefined.
double similarity_or_nan(const Footprint& a, const Footprint& b);

}  // namespace nnergy::account
