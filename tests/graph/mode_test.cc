#include "nnergy/graph/mode.h"

#include <gtest/gtest.h>

#include "nnergy/core/error.h"

namespace nnergy::graph {
namespace {

TEST(Mode, ParsesNamesAndRejectsOthers) {
  EXPECT_EQ(parse_mode("training", "--mode"), Mode::kTraining);
  EXPECT_THROW(parse_mode("sleeping", "--mode"), InvalidInput);
}

TEST(Mode, AcceptsShortFormsInAnyCase) {
  for (const char* name : {"inference", "infer", "Inference", "INFER", "iNfErEnCe"}) {
    EXPECT_EQ(parse_mode(name, "--mode"), Mode::kInference) << name;
  }
  for (const char* name : {"training", "train", "Training", "TRAIN"}) {
    EXPECT_EQ(parse_mode(name, "--mode"), Mode::kTraining) << name;
  }
  // Names round-trip through to_string.
  EXPECT_EQ(parse_mode(std::string(to_string(Mode::kTraining)), "x"), Mode::kTraining);
  EXPECT_EQ(parse_mode(std::string(to_string(Mode::kInference)), "x"), Mode::kInference);
}

std::string mode_message(const std::string& name) {
  try {
    parse_mode(name, "--mode");
  } catch (const InvalidInput& e) {
    return e.what();
  }
  return "(no InvalidInput thrown)";
}

TEST(Mode, UnknownNameNamesTheFlagTheAcceptedNamesAndTheNearest) {
  EXPECT_EQ(mode_message("sleeping"),
            "--mode: expected a mode, inference or training (any case; also infer, train), found "
            "'sleeping'");
  EXPECT_EQ(mode_message("trainig"),
            "--mode: expected a mode, inference or training (any case; also infer, train), found "
            "'trainig'; did you mean 'training'?");
  EXPECT_EQ(mode_message(""),
            "--mode: expected a mode, inference or training (any case; also infer, train), found "
            "''");
}

}  // namespace
}  // namespace nnergy::graph
