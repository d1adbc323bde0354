#include "nnergy/measure/trace_file.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "json_depth_bomb.h"
#include "nnergy/core/error.h"
#include "nnergy/measure/power_trace_format.h"

namespace nnergy::measure {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// nvidia-smi timestamps have millisecond digits; time differences are computed from whole
// seconds and fractions separately, so only decimal-to-binary rounding remains.
constexpr double kTimeToleranceS = 1e-9;

fs::path fixture(const std::string& name) {
  return fs::path(NNERGY_TEST_FIXTURE_DIR) / "measure" / name;
}

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InvalidInput& e) {
    return e.what();
  }
  return "(no InvalidInput thrown)";
}

// Runs the test body with TZ=UTC so that local-time nvidia-smi timestamps have known epochs.
class UtcTimeZone : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* tz = std::getenv("TZ");
    if (tz != nullptr) saved_ = tz;
    had_tz_ = tz != nullptr;
    setenv("TZ", "UTC", 1);
    tzset();
  }
  void TearDown() override {
    if (had_tz_) {
      setenv("TZ", saved_.c_str(), 1);
    } else {
      unsetenv("TZ");
    }
    tzset();
  }

 private:
  std::string saved_;
  bool had_tz_ = false;
};

// 2024/10/10 13:18:58 UTC.
constexpr double kSeedEpochS = 1728566338;

std::vector<PowerTrace> awkward_traces() {
  PowerTrace gpu;
  gpu.info.id = "nvml:0";
  gpu.info.kind = "gpu";
  gpu.info.name = "NVIDIA H100 80GB HBM3";
  gpu.info.uuid = "GPU-0a1b2c3d";
  gpu.info.driver_version = "550.54.15";
  gpu.info.power_limit_w = 700;
  gpu.info.has_energy_counter = true;
  gpu.info.power_is_averaged = true;
  PowerSample a;
  a.time_s = 0.1 + 0.2;  // not a short decimal
  a.epoch_s = 1728566338.3691234;
  a.power_w = 312.12345678901234;
  a.energy_j = 1e-300;
  a.sm_clock_mhz = 1980;
  a.memory_clock_mhz = 2619;
  a.temperature_c = 45.5;
  a.throttle_reasons = (std::uint64_t{1} << 63) | 0x4;
  PowerSample b;
  b.time_s = 1.0 / 3.0;
  b.epoch_s = 1728566338.4024567;
  b.power_w = 6.02214076e23;
  gpu.samples = {a, b};

  PowerTrace odd;
  odd.info.id = "replay:a,b.csv#x";  // a comma: quoted in the CSV
  odd.info.kind = "replay";
  odd.info.name = "pipe|back\\slash\nnewline";
  odd.info.has_power = false;
  odd.info.has_energy_counter = true;
  PowerSample c;
  c.time_s = 0.5;
  c.energy_j = 123.456;
  odd.samples = {c};
  return {gpu, odd};
}

void expect_same(const std::vector<PowerTrace>& actual, const std::vector<PowerTrace>& expected) {
  ASSERT_EQ(actual.size(), expected.size());
  for (std::size_t i = 0; i < actual.size(); ++i) {
    const SourceInfo& x = actual[i].info;
    const SourceInfo& y = expected[i].info;
    EXPECT_EQ(x.id, y.id);
    EXPECT_EQ(x.kind, y.kind);
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(x.uuid, y.uuid);
    EXPECT_EQ(x.driver_version, y.driver_version);
    EXPECT_EQ(x.power_limit_w, y.power_limit_w);
    EXPECT_EQ(x.has_energy_counter, y.has_energy_counter);
    EXPECT_EQ(x.has_power, y.has_power);
    EXPECT_EQ(x.power_is_averaged, y.power_is_averaged);
    ASSERT_EQ(actual[i].samples.size(), expected[i].samples.size());
    for (std::size_t k = 0; k < actual[i].samples.size(); ++k) {
      const PowerSample& s = actual[i].samples[k];
      const PowerSample& t = expected[i].samples[k];
      // Exact equality: the formats must round-trip every bit.
      EXPECT_EQ(s.time_s, t.time_s) << i << "/" << k;
      EXPECT_EQ(s.epoch_s, t.epoch_s);
      EXPECT_EQ(s.power_w, t.power_w);
      EXPECT_EQ(s.energy_j, t.energy_j);
      EXPECT_EQ(s.sm_clock_mhz, t.sm_clock_mhz);
      EXPECT_EQ(s.memory_clock_mhz, t.memory_clock_mhz);
      EXPECT_EQ(s.temperature_c, t.temperature_c);
      EXPECT_EQ(s.throttle_reasons, t.throttle_reasons);
    }
  }
}

// ---- nnergy CSV -------------------------------------------------------------------------------

TEST(TraceCsv, WriterWritesContextSourcesHeaderAndRows) {
  std::ostringstream out;
  SourceInfo info;
  info.id = "synthetic";
  info.kind = "synthetic";
  info.name = "synthetic";
  info.power_limit_w = 300;
  info.has_energy_counter = true;
  TraceCsvWriter writer(out, "# tool: nnergy\n# schema_version: 1", {info});
  PowerSample s;
  s.time_s = 0.02;
  s.epoch_s = 1728566338.389;
  s.power_w = 250;
  s.energy_j = 5;
  s.throttle_reasons = 4;
  writer.write(0, s);
  EXPECT_EQ(out.str(),
            "# tool: nnergy\n"
            "# schema_version: 1\n"
            "# source: synthetic|synthetic|synthetic|||300|true|false|true\n"
            "source,time_s,epoch_s,power_w,energy_j,sm_clock_mhz,memory_clock_mhz,temperature_c,"
            "throttle_reasons\n"
            "synthetic,0.02,1728566338.389,250,5,,,,4\n");
  EXPECT_THROW(writer.write(1, s), InternalError);
}

TEST(TraceCsv, RoundTripsEveryValueExactly) {
  const std::vector<PowerTrace> traces = awkward_traces();
  std::ostringstream out;
  write_trace_csv(out, "# tool: nnergy\n", traces);
  TraceWarnings warnings;
  expect_same(read_trace_text(out.str(), "mem.csv", &warnings), traces);
  EXPECT_TRUE(warnings.messages.empty());
}

TEST(TraceCsv, ReadsTheFixtureKeepingCounterOnlyRows) {
  TraceWarnings warnings;
  const std::vector<PowerTrace> traces = read_trace_file(fixture("nnergy_trace.csv"), &warnings);
  ASSERT_EQ(traces.size(), 2u);
  EXPECT_EQ(traces[0].info.id, "rapl:package-0");
  EXPECT_EQ(traces[0].info.kind, "cpu-package");
  EXPECT_TRUE(traces[0].info.has_energy_counter);
  ASSERT_EQ(traces[0].samples.size(), 2u) << "line 11 has neither power nor energy";
  EXPECT_FALSE(traces[0].samples[0].power_w.has_value());
  EXPECT_EQ(*traces[0].samples[0].energy_j, 1000.5);
  EXPECT_EQ(*traces[0].samples[1].power_w, 40.25);
  EXPECT_EQ(traces[1].info.power_limit_w, 300.0);
  ASSERT_EQ(traces[1].samples.size(), 3u);
  EXPECT_EQ(*traces[1].samples[2].energy_j, 10.0);
  EXPECT_EQ(traces[1].samples[2].throttle_reasons, 4u) << "0x4 is accepted too";
  EXPECT_EQ(*traces[1].samples[1].sm_clock_mhz, 1410.0);
  ASSERT_EQ(warnings.messages.size(), 1u);
  EXPECT_THAT(warnings.messages[0], HasSubstr("nnergy_trace.csv: 1 row with neither power nor "
                                              "energy dropped (line 11)"));
}

TEST(TraceCsv, AcceptsSourceLinesWithoutHasPower) {
  const std::string text =
      "# source: s|synthetic|s||||false|false\n"
      "source,time_s,epoch_s,power_w,energy_j,sm_clock_mhz,memory_clock_mhz,temperature_c,"
      "throttle_reasons\n"
      "s,0,0,1,,,,,0\n";
  const auto traces = read_trace_text(text, "old.csv", nullptr);
  ASSERT_EQ(traces.size(), 1u);
  EXPECT_TRUE(traces[0].info.has_power);
}

const std::string kHeader =
    "source,time_s,epoch_s,power_w,energy_j,sm_clock_mhz,memory_clock_mhz,temperature_c,"
    "throttle_reasons\n";

TEST(TraceCsv, NonMonotonicOrDuplicatedTimeNamesTheLine) {
  const std::string sources = "# source: a|gpu|a|||||\n# source: b|gpu|b|||||\n";
  // Interleaved sources share timestamps; only one source's own order matters.
  EXPECT_NO_THROW(read_trace_text(
      sources + kHeader + "a,0,0,1,,,,,0\nb,0,0,1,,,,,0\na,1,0,1,,,,,0\nb,1,0,1,,,,,0\n", "ok.csv",
      nullptr));
  EXPECT_THAT(message_of([&] {
                read_trace_text(sources + kHeader + "a,0,0,1,,,,,0\na,2,0,1,,,,,0\na,1,0,1,,,,,0\n",
                                "back.csv", nullptr);
              }),
              HasSubstr("back.csv: line 6: non-monotonic timestamp of source 'a' (1 s): expected "
                        "a time after the previous sample's at line 5 (2 s)"));
  EXPECT_THAT(message_of([&] {
                read_trace_text(sources + kHeader + "a,0,0,1,,,,,0\nb,0,0,1,,,,,0\nb,0,0,2,,,,,0\n",
                                "dup.csv", nullptr);
              }),
              HasSubstr("dup.csv: line 6: duplicated timestamp of source 'b'"));
}

TEST(TraceCsv, MalformedRowsNameLineAndColumn) {
  const std::string source = "# source: a|gpu|a|||||\n";
  EXPECT_THAT(message_of([&] {
                read_trace_text(source + kHeader + "a,0,0,many,,,,,0\n", "x.csv", nullptr);
              }),
              HasSubstr("x.csv: line 3: column power_w: expected a number in W or nothing, found "
                        "'many'"));
  EXPECT_THAT(
      message_of([&] { read_trace_text(source + kHeader + "a,,0,1,,,,,0\n", "x.csv", nullptr); }),
      HasSubstr("x.csv: line 3: column time_s: expected a number in s, found ''"));
  EXPECT_THAT(
      message_of([&] { read_trace_text(source + kHeader + "z,0,0,1,,,,,0\n", "x.csv", nullptr); }),
      HasSubstr("x.csv: line 3: source 'z' is not declared by a '# source:' line"));
  EXPECT_THAT(message_of([&] {
                read_trace_text(source + kHeader + "a,0,0,1\na,1,0,1,,,,,0\n", "x.csv", nullptr);
              }),
              HasSubstr("x.csv: line 3: expected 9 comma-separated fields as in the header (line "
                        "2), found 4"));
  EXPECT_THAT(message_of([&] {
                read_trace_text("# source: a|gpu\n" + kHeader + "a,0,0,1,,,,,0\n", "x.csv",
                                nullptr);
              }),
              HasSubstr("x.csv: line 1: expected '# source: id|kind|name|uuid|driver|"));
}

TEST(TraceCsv, NaNPowerRowsAreDroppedAndCounted) {
  const std::string text = "# source: a|gpu|a|||||\n" + kHeader +
                           "a,0,0,1,,,,,0\na,1,0,nan,,,,,0\na,2,0,,,,,,0\na,3,0,4,,,,,0\n";
  TraceWarnings warnings;
  const auto traces = read_trace_text(text, "n.csv", &warnings);
  ASSERT_EQ(traces[0].samples.size(), 2u);
  EXPECT_EQ(traces[0].samples[1].time_s, 3.0);
  EXPECT_THAT(warnings.messages,
              ElementsAre("n.csv: 2 rows with neither power nor energy dropped (lines 4, 5)"));
}

// ---- nnergy JSON ------------------------------------------------------------------------------

TEST(TraceJson, RoundTripsEveryValueExactlyAndCarriesTheContext) {
  const std::vector<PowerTrace> traces = awkward_traces();
  const std::string text = trace_json(R"({"tool": "nnergy", "schema_version": 1})", traces);
  const nlohmann::json parsed = nlohmann::json::parse(text);
  EXPECT_EQ(parsed["context"]["tool"], "nnergy");
  EXPECT_TRUE(parsed["sources"][0]["samples"][1]["energy_j"].is_null());
  EXPECT_EQ(parsed["sources"][0]["info"]["power_limit_w"], 700);
  TraceWarnings warnings;
  expect_same(read_trace_text(text, "mem.json", &warnings), traces);
  EXPECT_TRUE(warnings.messages.empty());
}

TEST(TraceJson, EmptyContextAndNoTracesAreValidJson) {
  const nlohmann::json parsed = nlohmann::json::parse(trace_json("", {}));
  EXPECT_TRUE(parsed["context"].is_object());
  EXPECT_TRUE(parsed["sources"].empty());
  EXPECT_THROW(trace_json("[1, 2]", {}), InternalError);
  EXPECT_THROW(trace_json("{not json", {}), InternalError);
}

TEST(TraceJson, ReadsTheFixture) {
  TraceWarnings warnings;
  const auto traces = read_trace_file(fixture("nnergy_trace.json"), &warnings);
  ASSERT_EQ(traces.size(), 1u);
  EXPECT_EQ(traces[0].info.name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(traces[0].info.power_limit_w, 700.0);
  EXPECT_TRUE(traces[0].info.power_is_averaged);
  ASSERT_EQ(traces[0].samples.size(), 2u);
  EXPECT_EQ(*traces[0].samples[1].energy_j, 52012.75);
  EXPECT_EQ(traces[0].samples[1].throttle_reasons, 4u);
  EXPECT_THAT(warnings.messages, ElementsAre(HasSubstr("(sources[0].samples[1])")));
}

TEST(TraceJson, ErrorsNameThePlace) {
  EXPECT_THAT(message_of([] { read_trace_text("{\"sources\": [", "t.json", nullptr); }),
              HasSubstr("t.json: not valid JSON: "));
  EXPECT_THAT(message_of([] { read_trace_text("{\"samples\": []}", "t.json", nullptr); }),
              HasSubstr("t.json: expected nnergy's JSON trace"));
  EXPECT_THAT(message_of([] {
                read_trace_text(R"({"sources": [{"info": {"id": "a"}, "samples": [
                  {"time_s": 0, "power_w": 1}, {"time_s": 2, "power_w": 1},
                  {"time_s": 1, "power_w": 1}]}]})",
                                "t.json", nullptr);
              }),
              HasSubstr("t.json: sources[0].samples[2]: non-monotonic timestamp of source 'a'"));
  EXPECT_THAT(message_of([] {
                read_trace_text(R"({"sources": [{"info": {"id": "a"}, "samples": [
                  {"time_s": 0, "power_w": "7 W"}]}]})",
                                "t.json", nullptr);
              }),
              HasSubstr("t.json: sources[0].samples[0].power_w: expected a number or null, found "
                        "\"7 W\""));
}

// Security review: a source's info nested 100,000 deep went into the message through a recursive
// dump() and overflowed the stack (SIGSEGV) of `nnergy account`, which reads these power files.
TEST(TraceJson, DeeplyNestedTraceIsInvalidInput) {
  const std::string bomb =
      R"({"sources": [{"info": )" + test_support::nested_json_arrays() + R"(, "samples": []}]})";
  EXPECT_THAT(message_of([&] { read_trace_text(bomb, "t.json", nullptr); }),
              HasSubstr("t.json: JSON nested deeper than 256 levels"));
}

// ---- nvidia-smi logs --------------------------------------------------------------------------

TEST_F(UtcTimeZone, NvidiaSmiLogWithUnitsHasOneTracePerGpu) {
  TraceWarnings warnings;
  const auto traces = read_trace_file(fixture("nvidia_smi_units.csv"), &warnings);
  ASSERT_EQ(traces.size(), 2u);
  const PowerTrace& gpu0 = traces[0];
  EXPECT_EQ(gpu0.info.id, "nvidia-smi:0");
  EXPECT_EQ(gpu0.info.kind, "gpu");
  EXPECT_EQ(gpu0.info.name, "NVIDIA A30");
  EXPECT_EQ(gpu0.info.uuid, "GPU-0a0a0a0a-1111-2222-3333-444444444444");
  EXPECT_EQ(gpu0.info.power_limit_w, 165.0);
  EXPECT_TRUE(gpu0.info.power_is_averaged) << "power.draw is a 1 s average on Ampere";
  EXPECT_FALSE(gpu0.info.has_energy_counter);
  ASSERT_EQ(gpu0.samples.size(), 3u);
  EXPECT_EQ(gpu0.samples[0].time_s, 0.0);
  EXPECT_NEAR(gpu0.samples[0].epoch_s, kSeedEpochS + 0.369, kTimeToleranceS);
  EXPECT_NEAR(gpu0.samples[1].time_s, 0.038, kTimeToleranceS);
  EXPECT_NEAR(gpu0.samples[2].time_s, 0.059, kTimeToleranceS);
  EXPECT_EQ(*gpu0.samples[0].power_w, 145.99);
  EXPECT_EQ(*gpu0.samples[1].power_w, 182.11);
  EXPECT_EQ(*gpu0.samples[0].sm_clock_mhz, 1440.0);
  EXPECT_FALSE(gpu0.samples[2].sm_clock_mhz.has_value()) << "[N/A] is absent";
  EXPECT_EQ(*gpu0.samples[0].memory_clock_mhz, 1215.0);
  EXPECT_EQ(*gpu0.samples[1].temperature_c, 42.0);
  EXPECT_EQ(gpu0.samples[1].throttle_reasons, 0x4u);

  const PowerTrace& gpu1 = traces[1];
  EXPECT_EQ(gpu1.info.id, "nvidia-smi:1");
  EXPECT_EQ(gpu1.info.uuid, "GPU-1b1b1b1b-5555-6666-7777-888888888888");
  ASSERT_EQ(gpu1.samples.size(), 2u) << "the [N/A] power row is dropped";
  EXPECT_EQ(gpu1.samples[0].time_s, 0.0);
  EXPECT_NEAR(gpu1.samples[1].time_s, 0.059, kTimeToleranceS);
  EXPECT_EQ(*gpu1.samples[1].power_w, 30.5);
  EXPECT_THAT(warnings.messages,
              ElementsAre(HasSubstr("/nvidia_smi_units.csv: 1 row with empty, N/A or NaN power "
                                    "dropped (line 5)")));
}

TEST_F(UtcTimeZone, NvidiaSmiLogWithoutUnits) {
  TraceWarnings warnings;
  const auto traces = read_trace_file(fixture("nvidia_smi_nounits.csv"), &warnings);
  ASSERT_EQ(traces.size(), 1u);
  EXPECT_FALSE(traces[0].info.power_is_averaged) << "power.draw.instant is instantaneous";
  ASSERT_EQ(traces[0].samples.size(), 3u);
  EXPECT_EQ(*traces[0].samples[0].power_w, 145.99);
  EXPECT_EQ(*traces[0].samples[2].power_w, 178.5);
  EXPECT_EQ(*traces[0].samples[2].sm_clock_mhz, 1410.0);
  EXPECT_NEAR(traces[0].samples[2].time_s, 0.121, kTimeToleranceS);
  ASSERT_EQ(warnings.messages.size(), 1u);
  EXPECT_THAT(warnings.messages[0], HasSubstr("2 rows with empty, N/A or NaN power dropped (lines "
                                              "4, 5)"));
}

TEST_F(UtcTimeZone, TimestampsAreLocalTime) {
  const std::string log =
      "timestamp, power.draw [W]\n2024/10/10 13:18:58.369, 100 W\n2024/10/10 13:18:59, 100 W\n";
  const double utc_epoch = read_trace_text(log, "l.csv", nullptr)[0].samples[0].epoch_s;
  EXPECT_NEAR(utc_epoch, kSeedEpochS + 0.369, kTimeToleranceS);
  setenv("TZ", "UTC-2", 1);  // POSIX sign: two hours east of UTC
  tzset();
  const auto traces = read_trace_text(log, "l.csv", nullptr);
  EXPECT_NEAR(traces[0].samples[0].epoch_s, kSeedEpochS + 0.369 - 7200, kTimeToleranceS);
  EXPECT_NEAR(traces[0].samples[1].time_s, 0.631, kTimeToleranceS) << "no fraction is .0";
}

TEST_F(UtcTimeZone, TimeDifferencesCrossHoursAndDaylightSavingChanges) {
  // Central European rules without a tz database: CET, CEST from the last Sunday of March 02:00.
  setenv("TZ", "CET-1CEST,M3.5.0,M10.5.0/3", 1);
  tzset();
  const auto traces = read_trace_text(
      "timestamp, power.draw [W]\r\n"
      "2024/03/31 00:59:59.750, 1 W\r\n"
      "2024/03/31 01:00:00.250, 2 W\r\n"
      "2024/03/31 01:59:59.500, 3 W\r\n"
      "2024/03/31 03:00:00.500, 4 W\r\n",
      "dst.csv", nullptr);
  ASSERT_EQ(traces[0].samples.size(), 4u);
  EXPECT_NEAR(traces[0].samples[1].time_s, 0.5, kTimeToleranceS);
  EXPECT_NEAR(traces[0].samples[2].time_s, 3599.75, kTimeToleranceS);
  // 02:00 CET became 03:00 CEST: one second passed, not an hour and one.
  EXPECT_NEAR(traces[0].samples[3].time_s, 3600.75, kTimeToleranceS);
  EXPECT_EQ(*traces[0].samples[3].power_w, 4.0) << "CRLF line ends are read";
}

TEST(NvidiaSmi, SeedLogWithoutHeaderIsRejectedWithTheExpectedHeader) {
  const std::string message =
      message_of([] { read_trace_file(fixture("seed000_headerless.csv"), nullptr); });
  EXPECT_THAT(message, HasSubstr("seed000_headerless.csv: line 1: expected a header"));
  EXPECT_THAT(message, HasSubstr("'timestamp, index, power.draw [W], clocks.current.sm [MHz]'"));
  EXPECT_THAT(message, HasSubstr("'source,time_s,epoch_s,power_w"));
  EXPECT_THAT(message, HasSubstr("found '2024/10/10 13:18:58.369, 81, 145.99, 4396, 11264'"));
}

TEST(NvidiaSmi, HeaderWithoutTimestampOrPowerNamesWhatIsNeeded) {
  const std::string message = message_of(
      [] { read_trace_text("index, clocks.sm [MHz]\n0, 1410 MHz\n", "c.csv", nullptr); });
  EXPECT_THAT(message, HasSubstr("c.csv: line 1: expected an nvidia-smi --format=csv header with "
                                 "a 'timestamp' column and a 'power.draw [W]'"));
}

TEST(NvidiaSmi, UnknownUnitNamesTheColumn) {
  const fs::path path = fs::temp_directory_path() / "nnergy_trace_bad_unit.csv";
  std::ofstream(path) << "timestamp, power.draw [mW]\n2024/10/10 13:18:58.369, 145990 mW\n";
  const std::string message = message_of([&] { read_trace_file(path, nullptr); });
  fs::remove(path);
  EXPECT_THAT(message, HasSubstr("nnergy_trace_bad_unit.csv: line 1: column 'power.draw [mW]': "
                                 "unit 'mW' is not understood; expected 'power.draw [W]'"));
}

TEST(NvidiaSmi, FaultyRowsNameTheirLine) {
  const std::string header = "timestamp, index, power.draw [W]\n";
  EXPECT_THAT(message_of([&] {
                read_trace_text(header +
                                    "2024/10/10 13:18:58.369, 0, 1 W\n"
                                    "2024/10/10 13:18:58.369, 1, 1 W\n"
                                    "2024/10/10 13:18:58.300, 0, 1 W\n",
                                "m.csv", nullptr);
              }),
              HasSubstr("m.csv: line 4: non-monotonic timestamp of source 'nvidia-smi:0'"));
  EXPECT_THAT(message_of([&] {
                read_trace_text(header +
                                    "2024/10/10 13:18:58.369, 0, 1 W\n"
                                    "2024/10/10 13:18:58.369, 0, 2 W\n",
                                "m.csv", nullptr);
              }),
              HasSubstr("m.csv: line 3: duplicated timestamp"));
  EXPECT_THAT(message_of([&] {
                read_trace_text(header + "2024-10-10T13:18:58, 0, 1 W\n", "m.csv", nullptr);
              }),
              HasSubstr("m.csv: line 2: column 'timestamp': expected local time as YYYY/MM/DD "
                        "HH:MM:SS.fff, found '2024-10-10T13:18:58'"));
  EXPECT_THAT(
      message_of([&] {
        read_trace_text(header + "2024/10/10 13:18:58.369, 0, lots W\n", "m.csv", nullptr);
      }),
      HasSubstr("m.csv: line 2: column 'power.draw [W]': expected a number in W, found 'lots W'"));
  EXPECT_THAT(message_of([&] {
                read_trace_text(header +
                                    "2024/10/10 13:18:58.369, 1 W\n"
                                    "2024/10/10 13:18:58.400, 0, 1 W\n",
                                "m.csv", nullptr);
              }),
              HasSubstr("m.csv: line 2: expected 3 comma-separated fields"));
}

TEST(NvidiaSmi, TruncatedLastLineIsDroppedWithAWarning) {
  TraceWarnings warnings;
  const auto traces = read_trace_file(fixture("nvidia_smi_truncated.csv"), &warnings);
  ASSERT_EQ(traces.size(), 1u);
  EXPECT_EQ(traces[0].samples.size(), 2u);
  EXPECT_THAT(warnings.messages,
              ElementsAre(HasSubstr("nvidia_smi_truncated.csv: line 4: truncated last line "
                                    "dropped (2 of 3 fields, no newline at the end)")));
}

TEST(TraceFile, NothingUsableIsAnError) {
  const fs::path path = fs::temp_directory_path() / "nnergy_trace_all_na.csv";
  std::ofstream(path) << "timestamp, power.draw [W]\n"
                         "2024/10/10 13:18:58.369, [N/A]\n"
                         "2024/10/10 13:18:58.400, [N/A]\n";
  const std::string message = message_of([&] { read_trace_file(path, nullptr); });
  fs::remove(path);
  EXPECT_THAT(message, HasSubstr("nnergy_trace_all_na.csv: no usable samples"));
  EXPECT_THAT(message, HasSubstr("2 rows with empty, N/A or NaN power dropped (lines 2, 3)"));
}

TEST(TraceFile, MissingAndEmptyFiles) {
  EXPECT_THAT(message_of([] { read_trace_file("/nonexistent/run.csv", nullptr); }),
              HasSubstr("/nonexistent/run.csv: cannot open the trace file: No such file"));
  EXPECT_THAT(message_of([] { read_trace_text("\n\n", "e.csv", nullptr); }),
              HasSubstr("e.csv: empty file"));
  EXPECT_THAT(message_of([] { read_trace_text("# only: comments\n", "c.csv", nullptr); }),
              HasSubstr("c.csv: no header after the comment lines"));
}

// Found by fuzz/power_trace: nlohmann::json throws out_of_range for a number beyond double's
// range; it escaped read_trace_text instead of becoming InvalidInput.
TEST(TraceFile, JsonNumberBeyondDoubleIsInvalidInput) {
  EXPECT_THAT(message_of([] {
                read_trace_text(R"({"sources": [{"info": {"id": "a", "power_limit_w": 7e400}}]})",
                                "big.json", nullptr);
              }),
              HasSubstr("big.json: not valid JSON"));
}

TEST(PowerTraceFormats, EachFileGoesToTheFormatThatRecognizesIt) {
  const PowerTraceFormats& formats = standard_power_trace_formats();
  EXPECT_EQ(formats.names(), (std::vector<std::string>{"nnergy-json", "nnergy-csv", "nvidia-smi"}));
  const auto recognizing = [&](const std::string& text) {
    const std::string label = "f";
    const TraceText file = trace_text(text, label);
    std::vector<std::string> names;
    for (const auto& entry : formats.entries()) {
      if (entry.value->recognizes(file)) names.push_back(entry.name);
    }
    return names;
  };
  EXPECT_EQ(recognizing(R"({"sources": []})"), std::vector<std::string>{"nnergy-json"});
  EXPECT_EQ(recognizing("# source: gpu0|gpu||||||\n"
                        "source,time_s,epoch_s,power_w,energy_j,sm_clock_mhz,memory_clock_mhz,"
                        "temperature_c,throttle_reasons\n"),
            std::vector<std::string>{"nnergy-csv"});
  EXPECT_EQ(recognizing("timestamp, index, power.draw [W]\n"),
            std::vector<std::string>{"nvidia-smi"});
  EXPECT_TRUE(recognizing("time,watts\n").empty());
}

}  // namespace
}  // namespace nnergy::measure
