// Ranks and the Pareto front of `nnergy compare`'s rows (report/comparison_report.h).
#include "nnergy/report/comparison_report.h"

#include <gtest/gtest.h>

#include <vector>

namespace {

using nnergy::report::ComparisonRow;

ComparisonRow row(const char* device, std::int64_t batch, bool optimal, double time_s,
                  double energy_j, double power_w, bool fits = true) {
  ComparisonRow r;
  r.device = device;
  r.batch = batch;
  r.energy_optimal_clock = optimal;
  r.time_s = time_s;
  r.energy_j = energy_j;
  r.power_w = power_w;
  r.edp_j_s = time_s * energy_j;
  r.fits_memory = fits;
  return r;
}

TEST(ComparisonRanks, RankEachClockKindOfEachBatchAndSkipRowsThatDoNotFit) {
  std::vector<ComparisonRow> rows = {
      row("fast", 8, false, 1.0, 4.0, 400),       // fastest, most energy
      row("frugal", 8, false, 2.0, 2.0, 100),     // slower, least energy
      row("worse", 8, false, 2.5, 5.0, 200),      // dominated by both
      row("big", 8, false, 0.5, 1.0, 50, false),  // would dominate all, but does not fit
      row("fast", 8, true, 1.5, 3.0, 200),       row("other-batch", 64, false, 9.0, 9.0, 9),
  };
  nnergy::report::rank_rows(rows);
  EXPECT_EQ(rows[0].rank_time, 1);
  EXPECT_EQ(rows[1].rank_time, 2);
  EXPECT_EQ(rows[2].rank_time, 3);
  EXPECT_EQ(rows[0].rank_energy, 2);
  EXPECT_EQ(rows[1].rank_energy, 1);
  EXPECT_EQ(rows[2].rank_energy, 3);
  EXPECT_EQ(rows[1].rank_power, 1);
  // EDP 4 J·s, 4 J·s and 12.5 J·s: ties keep the listed order.
  EXPECT_EQ(rows[0].rank_edp, 1);
  EXPECT_EQ(rows[1].rank_edp, 2);
  EXPECT_EQ(rows[2].rank_edp, 3);
  EXPECT_EQ(rows[3].rank_time, 0) << "a row that does not fit is not ranked";
  EXPECT_FALSE(rows[3].pareto);
  EXPECT_EQ(rows[4].rank_energy, 1) << "the optimal-clock rows are ranked among themselves";
  EXPECT_EQ(rows[5].rank_time, 1) << "each batch is ranked on its own";
  // Pareto over every row of batch 8 that fits: fast (1.0 s, 4 J), frugal (2.0 s, 2 J) and
  // fast at its optimal clock (1.5 s, 3 J) are not dominated; worse is.
  EXPECT_TRUE(rows[0].pareto);
  EXPECT_TRUE(rows[1].pareto);
  EXPECT_FALSE(rows[2].pareto);
  EXPECT_TRUE(rows[4].pareto);
  EXPECT_TRUE(rows[5].pareto);
  EXPECT_DOUBLE_EQ(rows[1].energy_per_sample_j(), 0.25);
  EXPECT_DOUBLE_EQ(rows[1].time_per_sample_s(), 0.25);
}

}  // namespace
