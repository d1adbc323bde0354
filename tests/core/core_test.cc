#include <gtest/gtest.h>

#include <cstdlib>

#include "nnergy/core/data_directory.h"
#include "nnergy/core/error.h"
#include "nnergy/core/units.h"

namespace nnergy {
namespace {

TEST(Units, PicojoulesAndMegahertz) {
  EXPECT_DOUBLE_EQ(units::picojoules_to_joules(6.21), 6.21e-12);
  EXPECT_DOUBLE_EQ(units::joules_to_picojoules(93.48e-12), 93.48);
  EXPECT_DOUBLE_EQ(units::megahertz_to_hertz(1410), 1.41e9);
}

TEST(DataDirectory, EnvironmentOverridesAndIsChecked) {
  ::setenv("NNERGY_DATA_DIR", NNERGY_TEST_DATA_DIR, 1);
  EXPECT_EQ(data_directory(), std::filesystem::path(NNERGY_TEST_DATA_DIR));
  ::setenv("NNERGY_DATA_DIR", "/nonexistent/nnergy-data", 1);
  EXPECT_THROW(data_directory(), InvalidInput);
  ::unsetenv("NNERGY_DATA_DIR");
  EXPECT_TRUE(std::filesystem::exists(data_directory() / "devices.json"));
}

TEST(Error, JoinAccepted) {
  EXPECT_EQ(join_with_commas({"a", "b", "c"}), "a, b, c");
  EXPECT_EQ(join_with_commas({}), "");
}

}  // namespace
}  // namespace nnergy
