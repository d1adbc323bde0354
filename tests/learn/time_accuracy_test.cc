#include "nnergy/learn/time_accuracy.h"

#include <gtest/gtest.h>

namespace nnergy::learn {
namespace {

// Ratios and shares below are quotients of a few exact numbers.
constexpr double kTolerance = 1e-12;

network::EvaluatedTime timed(predict::Mode mode, double measured_s, double predicted_s) {
  network::EvaluatedTime t;
  t.measurement.mode = mode;
  t.measurement.measured_s = measured_s;
  t.predicted_s = predicted_s;
  return t;
}

TEST(TimeAccuracy, PerGroupAndForAll) {
  // One inference time predicted exactly, two training times at ratios 0.5 and 1.
  const std::vector<network::EvaluatedTime> evaluated = {
      timed(predict::Mode::kInference, 2e-3, 2e-3), timed(predict::Mode::kTraining, 4e-3, 2e-3),
      timed(predict::Mode::kTraining, 3e-3, 3e-3)};
  const auto by_mode = time_accuracy(evaluated, [](const network::EvaluatedTime& t) {
    return std::string(predict::to_string(t.measurement.mode));
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

}  // namespace
}  // namespace nnergy::learn
