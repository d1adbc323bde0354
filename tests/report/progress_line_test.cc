#include "nnergy/report/progress_line.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

namespace nnergy::report {
namespace {

using testing::ElementsAre;

TEST(ProgressText, EstimatesTheRestAtThePaceSoFar) {
  EXPECT_EQ(progress_text("evaluate", "records", 0, 653, 0), "evaluate: 0/653 records");
  // 120 records in 30 s: the other 533 take 133 s.
  EXPECT_EQ(progress_text("evaluate", "records", 120, 653, 30),
            "evaluate: 120/653 records, ETA 2 min 13 s");
  EXPECT_EQ(progress_text("train", "fits", 2, 2, 10), "train: 2/2 fits");
}

// A ProgressLine whose output and clock the test holds.
struct Recorder {
  std::vector<std::string> written;
  double now_s = 0;
};

TEST(ProgressLineInALog, WritesAtMostThreePlainLines) {
  Recorder r;
  {
    ProgressLine line(
        "evaluate", "fits", false, [&](std::string_view text) { r.written.emplace_back(text); },
        [&] { return r.now_s; });
    for (std::size_t done = 0; done <= 100; ++done) {
      r.now_s = static_cast<double>(done);  // one fit per second
      line.update(done, 100);
    }
  }
  EXPECT_THAT(r.written, ElementsAre("evaluate: 25/100 fits, ETA 1 min 15 s\n",
                                     "evaluate: 50/100 fits, ETA 50 s\n",
                                     "evaluate: 75/100 fits, ETA 25 s\n"));
}

TEST(ProgressLineInALog, AQuickRunWritesNothing) {
  Recorder r;
  {
    ProgressLine line(
        "evaluate", "fits", false, [&](std::string_view text) { r.written.emplace_back(text); },
        [&] { return r.now_s; });
    for (std::size_t done = 0; done <= 10; ++done) {
      r.now_s = 0.1 * static_cast<double>(done);
      line.update(done, 10);
    }
  }
  EXPECT_TRUE(r.written.empty());
}

TEST(ProgressLineOnATerminal, RewritesOneLineAndErasesIt) {
  Recorder r;
  {
    ProgressLine line(
        "evaluate", "fits", true, [&](std::string_view text) { r.written.emplace_back(text); },
        [&] { return r.now_s; });
    line.update(0, 4);
    r.now_s = 1;
    line.update(1, 4);
    r.now_s = 1.01;  // too soon to redraw
    line.update(2, 4);
    r.now_s = 2;
    line.update(4, 4);  // the end is always drawn
  }
  EXPECT_THAT(r.written,
              ElementsAre("\revaluate: 0/4 fits\x1b[K", "\revaluate: 1/4 fits, ETA 3 s\x1b[K",
                          "\revaluate: 4/4 fits\x1b[K", "\r\x1b[K"));
}

TEST(ProgressLineOnATerminal, TheCallbackForwardsAndAnErrorLeavesACleanLine) {
  Recorder r;
  try {
    ProgressLine line(
        "train", "fits", true, [&](std::string_view text) { r.written.emplace_back(text); },
        [&] { return r.now_s; });
    const ProgressCallback progress = line.callback();
    progress(0, 2);
    throw std::runtime_error("the fit failed");
  } catch (const std::runtime_error&) {
  }
  EXPECT_THAT(r.written, ElementsAre("\rtrain: 0/2 fits\x1b[K", "\r\x1b[K"));
}

}  // namespace
}  // namespace nnergy::report
