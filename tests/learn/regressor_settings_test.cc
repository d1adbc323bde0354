#include "nnergy/learn/regressor_settings.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "nnergy/core/error.h"

namespace nnergy::learn {
namespace {

using ::testing::HasSubstr;

TEST(RegressorSettings, ValuesAreJsonWhenTheyReadAsJsonAndStringsOtherwise) {
  const nlohmann::json settings = parse_regressor_settings(
      {"max_depth=8", "eta=0.3", "log=true", "transform=log", "name=\"a b\"", "list=[1,2]"},
      "--set");
  EXPECT_EQ(settings["max_depth"], 8);
  EXPECT_DOUBLE_EQ(settings["eta"].get<double>(), 0.3);
  EXPECT_EQ(settings["log"], true);
  EXPECT_EQ(settings["transform"], "log");
  EXPECT_EQ(settings["name"], "a b");
  EXPECT_EQ(settings["list"], "[1,2]");  // no regressor takes arrays: kept as the text given
  EXPECT_EQ(parse_regressor_settings({}, "--set"), nlohmann::json::object());
}

TEST(RegressorSettings, MalformedItemsNameTheFlagAndTheItem) {
  for (const char* bad : {"max_depth", "=3"}) {
    try {
      parse_regressor_settings({bad}, "--set");
      ADD_FAILURE() << "no InvalidInput for " << bad;
    } catch (const InvalidInput& e) {
      EXPECT_THAT(e.what(), HasSubstr("--set '" + std::string(bad) + "'"));
      EXPECT_THAT(e.what(), HasSubstr("KEY=VALUE"));
    }
  }
  try {
    parse_regressor_settings({"eta=1", "eta=2"}, "--set");
    ADD_FAILURE() << "no InvalidInput for a key given twice";
  } catch (const InvalidInput& e) {
    EXPECT_THAT(e.what(), HasSubstr("eta is set twice"));
  }
}

}  // namespace
}  // namespace nnergy::learn
