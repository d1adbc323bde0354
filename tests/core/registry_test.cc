#include "nnergy/core/registry.h"

#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "nnergy/core/error.h"

namespace nnergy {
namespace {

TEST(Registry, KeepsRegistrationOrderAndRefusesADuplicate) {
  Registry<int> r("widget");
  r.add("zeta", "the last letter", 26);
  r.add("alpha", "the first", 1);
  EXPECT_EQ(r.names(), (std::vector<std::string>{"zeta", "alpha"}));
  EXPECT_EQ(r.entries()[1].summary, "the first");
  EXPECT_EQ(r.get("alpha"), 1);
  EXPECT_TRUE(r.contains("zeta"));
  EXPECT_EQ(r.find("beta"), nullptr);
  EXPECT_THROW(r.add("alpha", "again", 2), InternalError);
}

TEST(Registry, AnUnknownNameListsTheAcceptedOnesAndTheNearest) {
  Registry<std::function<int()>> r("source kind");
  r.add("nvml", "", [] { return 1; });
  r.add("rapl", "", [] { return 2; });
  EXPECT_EQ(r.get("rapl")(), 2);
  try {
    r.get("nvlm");
    FAIL() << "no error";
  } catch (const InvalidInput& e) {
    EXPECT_STREQ(e.what(),
                 "unknown source kind 'nvlm'; accepted: nvml, rapl; did you mean 'nvml'?");
  }
  EXPECT_EQ(r.unknown_message("gpu"), "unknown source kind 'gpu'; accepted: nvml, rapl");
}

}  // namespace
}  // namespace nnergy
