#include "nnergy/measure/replay_source.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "nnergy/core/error.h"
#include "nnergy/measure/source_factories.h"

namespace nnergy::measure {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

PowerTrace recorded_gpu() {
  PowerTrace trace;
  trace.info.id = "nvml:0";
  trace.info.kind = "gpu";
  trace.info.name = "NVIDIA A100-SXM4-40GB";
  trace.info.uuid = "GPU-abc";
  trace.info.power_limit_w = 400;
  trace.info.has_energy_counter = true;
  trace.info.power_is_averaged = true;
  // Recorded 10 s into some other run, with a counter that had been running since boot.
  const double times[] = {10.0, 10.5, 11.0};
  const double powers[] = {200, 210, 220};
  const double energies[] = {1000, 1100, 1250};
  for (int i = 0; i < 3; ++i) {
    PowerSample s;
    s.time_s = times[i];
    s.epoch_s = 1728566338 + times[i];
    s.power_w = powers[i];
    s.energy_j = energies[i];
    s.sm_clock_mhz = 1410 - 100 * i;
    s.throttle_reasons = i == 2 ? 0x4 : 0;
    trace.samples.push_back(s);
  }
  return trace;
}

TEST(ReplaySource, DescribesItselfAsTheRecordedSource) {
  ReplaySource replay(recorded_gpu(), "run.csv");
  EXPECT_EQ(replay.info().id, "replay:run.csv#nvml:0");
  EXPECT_EQ(replay.info().kind, "replay");
  EXPECT_EQ(replay.info().name, "NVIDIA A100-SXM4-40GB");
  EXPECT_EQ(replay.info().uuid, "GPU-abc");
  EXPECT_EQ(replay.info().power_limit_w, 400.0);
  EXPECT_TRUE(replay.info().has_energy_counter);
  EXPECT_TRUE(replay.info().power_is_averaged);
  EXPECT_EQ(replay.duration_s(), 1.0);
}

TEST(ReplaySource, PlaysTheLastSampleAtOrBeforeTheCallersTime) {
  ReplaySource replay(recorded_gpu(), "run.csv");
  const PowerSample start = replay.read(0.0);
  EXPECT_EQ(start.time_s, 0.0);
  EXPECT_EQ(*start.power_w, 200.0);
  EXPECT_EQ(*start.energy_j, 0.0) << "energy starts at 0 at the first sample";

  const PowerSample before_second = replay.read(0.49);
  EXPECT_EQ(before_second.time_s, 0.49);
  EXPECT_EQ(*before_second.power_w, 200.0);

  const PowerSample at_second = replay.read(0.5);
  EXPECT_EQ(*at_second.power_w, 210.0);
  EXPECT_EQ(*at_second.energy_j, 100.0);
  EXPECT_EQ(*at_second.sm_clock_mhz, 1310.0);

  const PowerSample after_end = replay.read(5.0);
  EXPECT_EQ(after_end.time_s, 5.0);
  EXPECT_EQ(*after_end.power_w, 220.0);
  EXPECT_EQ(*after_end.energy_j, 250.0);
  EXPECT_EQ(after_end.throttle_reasons, 0x4u);

  EXPECT_EQ(*replay.read(-1.0).power_w, 200.0) << "before the recording: its first sample";
  EXPECT_EQ(*replay.read(0.75).power_w, 210.0) << "reads need not be in order";
}

TEST(ReplaySource, TraceWithoutEnergyStaysWithoutEnergy) {
  PowerTrace trace = recorded_gpu();
  for (PowerSample& s : trace.samples) s.energy_j.reset();
  ReplaySource replay(std::move(trace), "smi.csv");
  EXPECT_FALSE(replay.read(0.6).energy_j.has_value());
  EXPECT_EQ(*replay.read(0.6).power_w, 210.0);
}

TEST(ReplaySource, EmptyTraceIsRejected) {
  PowerTrace trace;
  trace.info.id = "x";
  EXPECT_THROW(ReplaySource(trace, "empty.csv"), InvalidInput);
}

TEST(ReplaySource, FactoryOpensOneSourcePerTraceOfTheFile) {
  const std::string path =
      (std::filesystem::path(NNERGY_TEST_FIXTURE_DIR) / "measure" / "nvidia_smi_units.csv")
          .string();
  TraceWarnings warnings;
  const Detection d = open_replay_sources(path, &warnings);
  std::vector<std::string> ids;
  for (const auto& s : d.sources) ids.push_back(s->info().id);
  EXPECT_THAT(ids,
              ElementsAre("replay:" + path + "#nvidia-smi:0", "replay:" + path + "#nvidia-smi:1"));
  EXPECT_EQ(*d.sources[0]->read(0.04).power_w, 182.11);
  EXPECT_EQ(warnings.messages.size(), 1u) << "the reader's dropped-row warning is passed on";
  EXPECT_EQ(open_replay_sources(path).sources.size(), 2u);
}

TEST(ReplaySource, FactoryErrorsAreInvalidInput) {
  try {
    open_replay_sources("");
    FAIL() << "expected InvalidInput";
  } catch (const InvalidInput& e) {
    EXPECT_THAT(e.what(), HasSubstr("expected a trace file path, e.g. replay:run.csv"));
  }
  EXPECT_THROW(open_replay_sources("/nonexistent/run.csv"), InvalidInput);
}

}  // namespace
}  // namespace nnergy::measure
