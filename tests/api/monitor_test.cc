// api::monitor: a command measured with a synthetic source, its exit status, the trace it
// writes, and the errors of a request that cannot be measured.
#include "nnergy/api/monitor.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "nnergy/core/error.h"
#include "temp_dir_test.h"
#include "test_environment.h"

namespace nnergy::api {
namespace {

using measure::testing::ScopedEnv;
using testing::HasSubstr;
using testing::StartsWith;

// Hides the machine's own NVML and RAPL, so that detection finds nothing.
class ApiMonitor : public test_support::TempDirTest {
 protected:
  ApiMonitor()
      : nvml_("NNERGY_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1"),
        powercap_("NNERGY_POWERCAP_ROOT", "/nonexistent/powercap") {}

 private:
  ScopedEnv nvml_;
  ScopedEnv powercap_;
};

MonitorRequest sleep_with(std::vector<std::string> sources) {
  MonitorRequest r;
  r.command = {"sleep", "0.3"};
  r.interval_ms = 10;
  r.sources = std::move(sources);
  r.command_line = "api_test";
  return r;
}

TEST_F(ApiMonitor, MeasuresASyntheticSourceOverTheCommand) {
  const report::MonitorReport report = monitor(sleep_with({"synthetic:constant=250"}));
  EXPECT_EQ(report.exit_code, 0);
  EXPECT_GE(report.wall_time_s, 0.3);
  ASSERT_EQ(report.sources.size(), 1u);
  const measure::SourceMeasurement& s = report.sources.front();
  EXPECT_EQ(s.energy_method, "counter");
  // A constant source's counter is exact: 250 W × the window to rounding error.
  ASSERT_TRUE(s.energy_j);
  EXPECT_NEAR(*s.energy_j, 250 * report.wall_time_s, 1e-9 * 250 * report.wall_time_s);
  EXPECT_EQ(report.command, "sleep 0.3");
  EXPECT_EQ(report.context.to_json()["command"], "sleep 0.3");
  EXPECT_TRUE(report.warnings.empty());
  EXPECT_EQ(report::to_json(report)["sources"][0]["energy_method"], "counter");
}

TEST_F(ApiMonitor, TheCommandsExitStatusIsTheResultNotAnError) {
  MonitorRequest r = sleep_with({"synthetic:constant=1"});
  r.command = {"sh", "-c", "exit 7"};
  EXPECT_EQ(monitor(r).exit_code, 7);
}

// A source asked for by name that is absent is a device error, raised before the command runs.
TEST_F(ApiMonitor, AnAbsentNamedSourceIsADeviceErrorAndTheCommandDoesNotRun) {
  const std::filesystem::path ran = dir_ / "ran";
  MonitorRequest r = sleep_with({"nvml"});
  r.command = {"touch", ran.string()};
  r.names = SettingNames::kFlag;
  try {
    monitor(r);
    ADD_FAILURE() << "no DeviceError";
  } catch (const DeviceError& e) {
    EXPECT_THAT(e.what(), StartsWith("--source nvml: the power source is not available here"));
    EXPECT_THAT(e.what(), HasSubstr("/nonexistent/libnvidia-ml.so.1"));
  }
  EXPECT_FALSE(std::filesystem::exists(ran));
  r.sources = {"rapl"};
  EXPECT_THROW(monitor(r), DeviceError);
}

TEST_F(ApiMonitor, DetectionFindingNothingStillMeasuresTheTimeAndExplains) {
  const report::MonitorReport report = monitor(sleep_with({}));
  EXPECT_TRUE(report.sources.empty());
  ASSERT_EQ(report.unavailable.size(), 2u);
  EXPECT_THAT(report::render_text(report),
              HasSubstr("no power source available: only the wall time is measured"));
}

// Recording a trace without power is said while recording, not found out when accounting.
TEST_F(ApiMonitor, ATraceWithoutPowerIsWarnedAboutWhenRecorded) {
  MonitorRequest r = sleep_with({});
  r.output = dir_ / "power.csv";
  r.names = SettingNames::kFlag;
  const report::MonitorReport report = monitor(r);
  ASSERT_EQ(report.warnings.size(), 1u);
  EXPECT_THAT(report.warnings[0],
              StartsWith("--output " + r.output.string() + ": the trace holds no power samples"));
  EXPECT_THAT(report::render_text(report), HasSubstr(" warning: --output "));
  EXPECT_TRUE(std::filesystem::exists(r.output));
  r.sources = {"synthetic:constant=100"};
  EXPECT_TRUE(monitor(r).warnings.empty());
}

TEST_F(ApiMonitor, BadRequestsAreInvalidInputNamingTheSetting) {
  MonitorRequest r = sleep_with({"synthetic:constant=1"});
  r.interval_ms = 0;
  EXPECT_THROW(
      {
        try {
          monitor(r);
        } catch (const InvalidInput& e) {
          EXPECT_THAT(e.what(), StartsWith("interval_ms=0: expected 1 to 60000"));
          throw;
        }
      },
      InvalidInput);
  r.interval_ms = 10;
  r.command = {"no-such-command-xyz"};
  EXPECT_THROW(monitor(r), InvalidInput);
  r.command = {};
  EXPECT_THROW(monitor(r), InvalidInput);
}

}  // namespace
}  // namespace nnergy::api
