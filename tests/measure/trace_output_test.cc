// TraceOutput: a CSV trace streamed to "<path>.partial" and renamed when finished; a JSON trace
// written at the end; both read back as written.
#include "nnergy/measure/trace_output.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "nnergy/core/error.h"
#include "nnergy/measure/trace_file.h"
#include "temp_dir_test.h"

namespace nnergy::measure {
namespace {

using ::testing::HasSubstr;
using TraceOutputTest = test_support::TempDirTest;

SourceInfo synthetic() {
  SourceInfo info;
  info.id = "synthetic";
  info.kind = "synthetic";
  return info;
}

PowerSample sample(double time_s, double power_w) {
  PowerSample s;
  s.time_s = time_s;
  s.epoch_s = 1.7e9 + time_s;
  s.power_w = power_w;
  return s;
}

TEST_F(TraceOutputTest, CsvIsStreamedToPartialAndRenamedWhenFinished) {
  const std::filesystem::path path = dir_ / "run.csv";
  TraceOutput out(path, RunContext::now("nnergy monitor -o run.csv"), {synthetic()}, "--output");
  EXPECT_FALSE(out.is_json());
  out.write(0, sample(0, 100));
  out.write(0, sample(0.5, 300));
  EXPECT_TRUE(std::filesystem::exists(path.string() + ".partial"));
  EXPECT_FALSE(std::filesystem::exists(path));
  out.finish({});
  EXPECT_FALSE(std::filesystem::exists(path.string() + ".partial"));
  const std::vector<PowerTrace> traces = read_trace_file(path, nullptr);
  ASSERT_EQ(traces.size(), 1u);
  EXPECT_EQ(traces[0].info.id, "synthetic");
  ASSERT_EQ(traces[0].samples.size(), 2u);
  EXPECT_EQ(traces[0].samples[1].power_w, 300);
}

TEST_F(TraceOutputTest, JsonIsWrittenAtTheEndFromTheTracesGiven) {
  const std::filesystem::path path = dir_ / "run.json";
  TraceOutput out(path, RunContext::now("nnergy monitor -o run.json"), {synthetic()}, "--output");
  EXPECT_TRUE(out.is_json());
  out.write(0, sample(0, 100));  // kept by the caller, not streamed
  EXPECT_FALSE(std::filesystem::exists(path.string() + ".partial"));
  out.finish({{synthetic(), {sample(0, 100), sample(0.5, 250)}}});
  const std::vector<PowerTrace> traces = read_trace_file(path, nullptr);
  ASSERT_EQ(traces.size(), 1u);
  ASSERT_EQ(traces[0].samples.size(), 2u);
  EXPECT_EQ(traces[0].samples[1].power_w, 250);
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir_), {}), 1);
}

TEST_F(TraceOutputTest, NoPathWritesNothing) {
  TraceOutput out("", RunContext::now(""), {synthetic()}, "--output");
  out.write(0, sample(0, 100));
  out.finish({});
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir_), {}), 0);
}

TEST_F(TraceOutputTest, AnUnwritablePathIsInvalidInputNamingTheSetting) {
  const std::filesystem::path path = dir_ / "no-such-dir" / "run.csv";
  try {
    TraceOutput out(path, RunContext::now(""), {synthetic()}, "output");
    ADD_FAILURE() << "no InvalidInput";
  } catch (const InvalidInput& e) {
    EXPECT_THAT(e.what(), HasSubstr("output " + path.string() + ": cannot open"));
  }
  TraceOutput json(dir_ / "no-such-dir" / "run.json", RunContext::now(""), {synthetic()}, "output");
  EXPECT_THROW(json.finish({}), InvalidInput);
}

}  // namespace
}  // namespace nnergy::measure
