#include "nnergy/measure/power_sample.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace nnergy::measure {
namespace {

TEST(ThrottleReasons, NamesBitsAndSeparatesIdleFromThrottling) {
  EXPECT_THAT(throttle_reason_names(0x4 | 0x40),
              ::testing::ElementsAre("sw_power_cap", "hw_thermal_slowdown"));
  EXPECT_THAT(throttle_reason_names(0x1000), ::testing::ElementsAre("0x1000"));
  EXPECT_TRUE(throttle_reason_names(0).empty());
  EXPECT_FALSE(is_throttling(0x1));  // idle
  EXPECT_FALSE(is_throttling(0x2));  // application clocks as set by the user
  EXPECT_TRUE(is_throttling(0x4));
  EXPECT_TRUE(is_throttling(0x1 | 0x20));
}

}  // namespace
}  // namespace nnergy::measure
