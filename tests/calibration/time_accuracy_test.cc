#include "nnergy/calibration/time_accuracy.h"

#include <gtest/gtest.h>

namespace nnergy::calibration {
namespace {

// Ratios and shares below are quotients of a few exact numbers.
constexpr double kTolerance = 1e-12;

network::EvaluatedTime timed(graph::Mode mode, double measured_s, double predicted_s) {
  network::EvaluatedTime t;
  t.measurement.mode = mode;
  t.measurement.measured_s = measured_s;
  t.predicted_s = predicted_s;
  return t;
}

TEST(TimeAccuracy, PerGroupAndForAll) {
  // One inference time predicted exactly, two training times at ratios 0.5 and 1.
  const std::vector<network::EvaluatedTime> evaluated = {timed(graph::Mode::kInference, 2e-3, 2e-3),
                                                         timed(graph::Mode::kTraining, 4e-3, 2e-3),
                                                         timed(graph::Mode::kTraining, 3e-3, 3e-3)};
  const auto by_mode = time_accuracy(evaluated, [](const network::EvaluatedTime& t) {
    return std::string(graph::to_string(t.measurement.mode));
  });
  ASSERT_EQ(by_mode.size(), 3u);  // inference, training, all
  EXPECT_EQ(by_mode.back().group, "all");
  EXPECT_EQ(by_mode.back().metrics.count, 3u);
  EXPECT_NEAR(by_mode.back().metrics.mape_percent / 100, 0.5 / 3, kTolerance);
  EXPECT_NEAR(by_mode.back().median_ratio, 1.0, kTolerance);
  EXPECT_NEAR(by_mode.back().metrics.within_10_percent, 2.0 / 3, kTolerance);
  EXPECT_NEAR(by_mode[1].median_ratio, 0.75, kTolerance);  // training: 0.5 and 1
}

TEST(TimeAccuracy, NoTimesGiveAnEmptyAll) {
  const auto rows = time_accuracy({}, [](const network::EvaluatedTime&) { return "x"; });
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].metrics.count, 0u);
}

TEST(FigureAccuracy, ScoresAnyQuantityPerGroupOfRuns) {
  // Two powers of one run's device (W): 5 % over and 20 % under; one of another, exact.
  network::NetworkTimeMeasurement a;
  a.device_id = "a";
  network::NetworkTimeMeasurement b;
  b.device_id = "b";
  const std::vector<ScoredFigure> figures = {{&a, 100, 105}, {&a, 100, 80}, {&b, 300, 300}};
  const auto rows = figure_accuracy(
      figures, [](const network::NetworkTimeMeasurement& m) { return m.device_id; });
  ASSERT_EQ(rows.size(), 3u);  // a, b, all
  EXPECT_EQ(rows[0].group, "a");
  EXPECT_EQ(rows[0].metrics.count, 2u);
  EXPECT_NEAR(rows[0].metrics.mape_percent, 12.5, 1e-9);
  EXPECT_NEAR(rows[0].median_ratio, 0.925, kTolerance);
  EXPECT_NEAR(rows[0].metrics.within_10_percent, 0.5, kTolerance);
  EXPECT_EQ(rows[2].group, "all");
  EXPECT_NEAR(rows[2].metrics.mape_percent, 25.0 / 3, 1e-9);
  EXPECT_NEAR(rows[2].median_ratio, 1.0, kTolerance);
}

}  // namespace
}  // namespace nnergy::calibration
