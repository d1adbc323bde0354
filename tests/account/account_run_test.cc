// Loading runs (session.json, time bases, power files) and accounting the committed real trace:
// ResNet-18, two CPU training steps recorded with nnergy_torch on torch 1.13.
#include "nnergy/account/account_run.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <utility>

#include "json_depth_bomb.h"
#include "nnergy/account/footprint.h"
#include "nnergy/account/footprint_writers.h"
#include "nnergy/core/error.h"
#include "nnergy/core/json_text.h"

namespace nnergy::account {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

const fs::path kRun = fs::path(NNERGY_TEST_FIXTURE_DIR) / "account" / "resnet18_cpu";

TraceReaderRegistry standard_readers() {
  TraceReaderRegistry registry;
  register_standard_trace_readers(registry);
  return registry;
}

fs::path temporary_directory(const std::string& name) {
  const fs::path dir =
      fs::temp_directory_path() / ("nnergy_account_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

void write(const fs::path& path, const std::string& text) { std::ofstream(path) << text; }

// Exclusive time of every event by a method independent of the sweep: each event's parent is the
// shortest other event on its thread that contains it (identical spans: the earlier one is
// outer), and exclusive time is duration minus the children's durations. O(n²).
std::vector<double> naive_exclusive_times(const std::vector<TraceEvent>& events) {
  const std::size_t n = events.size();
  std::vector<double> exclusive(n);
  for (std::size_t j = 0; j < n; ++j) exclusive[j] = events[j].duration_s;
  for (std::size_t j = 0; j < n; ++j) {
    const TraceEvent& c = events[j];
    if (!(c.duration_s > 0)) continue;
    std::size_t parent = n;
    for (std::size_t k = 0; k < n; ++k) {
      const TraceEvent& p = events[k];
      if (k == j || p.thread != c.thread || p.device != c.device) continue;
      // Times are whole µs shifted to the accounting base; compare them to well under 1 µs.
      constexpr double kSameTime_s = 1e-9;
      const bool contains = p.start_s <= c.start_s + kSameTime_s &&
                            c.start_s + c.duration_s <= p.start_s + p.duration_s + kSameTime_s;
      const bool identical = std::abs(p.start_s - c.start_s) < kSameTime_s &&
                             std::abs(p.duration_s - c.duration_s) < kSameTime_s;
      if (!contains || (identical && k > j)) continue;
      if (parent == n || p.duration_s < events[parent].duration_s ||
          (p.duration_s == events[parent].duration_s && k > parent)) {
        parent = k;
      }
    }
    if (parent != n) exclusive[parent] -= c.duration_s;
  }
  return exclusive;
}

PowerTimeline constant_power(double power_w, double from_s, double to_s) {
  PowerTimeline t;
  t.device = "cpu";
  t.source_ids = {"hand-made"};
  t.time_s = {from_s, to_s};
  t.power_w = {power_w, power_w};
  return t;
}

TEST(AccountRun, ReadsTheSessionOfTheCommittedRun) {
  const AccountInputs inputs = read_session_directory(kRun);
  ASSERT_EQ(inputs.trace_files.size(), 1u);
  EXPECT_EQ(inputs.trace_files[0], kRun / "trace.json");
  ASSERT_TRUE(inputs.session_offset_s.has_value());
  EXPECT_GT(*inputs.session_offset_s, 1.6e9);  // a UNIX time
  EXPECT_EQ(inputs.source_devices.at("synthetic"), "cpu");
}

TEST(AccountRun, RealTraceAtConstantPowerGetsPowerTimesExclusiveTime) {
  AccountRun run = load_account_run(read_session_directory(kRun), standard_readers(), false);
  EXPECT_EQ(run.trace_formats, (std::vector<std::string>{"torch-legacy"}));
  ASSERT_GT(run.events.size(), 3000u);
  // The session's recorded power trace covers the program trace.
  ASSERT_EQ(run.power.size(), 1u);
  const Accounting recorded = account_energy(run.events, run.power, {});
  EXPECT_EQ(recorded.devices[0].unmeasured_busy_time_s, 0.0);

  // A hand-made 80 W over a span wider than the trace: one thread, so every event gets
  // 80 W × its exclusive time.
  constexpr double kPower_w = 80.0;
  const Accounting a = account_energy(run.events, {constant_power(kPower_w, -1.0, 100.0)}, {});
  const std::vector<double> exclusive = naive_exclusive_times(run.events);
  // Trace times are whole µs; the sweep and the naive sum differ only by rounding.
  constexpr double kTolerance_j = 1e-9;
  double busy_s = 0;
  for (std::size_t i = 0; i < run.events.size(); ++i) {
    ASSERT_NEAR(a.events[i].energy_j, kPower_w * exclusive[i], kTolerance_j)
        << run.events[i].qualified_name;
    busy_s += exclusive[i];
  }
  const DeviceAccount& d = a.devices[0];
  EXPECT_NEAR(d.attributed_energy_j, kPower_w * busy_s, 1e-6);
  EXPECT_NEAR(d.measured_energy_j, kPower_w * (d.window_end_s - d.window_start_s), 1e-6);
  EXPECT_NEAR(d.attributed_energy_j + d.idle_energy_j, d.measured_energy_j, 1e-9);

  // The module hierarchy and the backward ops' modules are restored.
  const Footprint tef = tensor_energy_footprint(run.events, a);
  std::map<std::string, const FootprintEntry*> by_name;
  for (const auto& e : tef) by_name[e.name] = &e;
  ASSERT_TRUE(by_name.count("ResNet.layer4.1.conv2/aten::mkldnn_convolution"));
  ASSERT_TRUE(by_name.count("ResNet.layer4.1.conv2/aten::convolution_backward"));
  EXPECT_GT(by_name["ResNet.layer4.1.conv2/aten::convolution_backward"]->backward_energy_j, 0.0);
  EXPECT_GT(by_name["ResNet.conv1/aten::mkldnn_convolution"]->forward_energy_j, 0.0);
}

TEST(AccountRun, RealTraceWithAPowerStepSplitsAtTheStep) {
  AccountRun run = load_account_run(read_session_directory(kRun), standard_readers(), false);
  // Step from 50 W to 200 W at the first backward op of the first step.
  double step_s = 1e9;
  for (const TraceEvent& e : run.events) {
    if (e.pass == Pass::kBackward) step_s = std::min(step_s, e.start_s);
  }
  ASSERT_LT(step_s, 1e9);
  PowerTimeline t;
  t.device = "cpu";
  t.time_s = {-1.0, step_s, 100.0};
  t.power_w = {50.0, 200.0, 200.0};
  const Accounting a = account_energy(run.events, {t}, {});
  const std::vector<double> exclusive = naive_exclusive_times(run.events);
  std::size_t before = 0;
  std::size_t after = 0;
  constexpr double kTolerance_j = 1e-9;
  for (std::size_t i = 0; i < run.events.size(); ++i) {
    const TraceEvent& e = run.events[i];
    if (e.start_s + e.duration_s <= step_s) {
      ASSERT_NEAR(a.events[i].energy_j, 50.0 * exclusive[i], kTolerance_j);
      ++before;
    } else if (e.start_s >= step_s) {
      ASSERT_NEAR(a.events[i].energy_j, 200.0 * exclusive[i], kTolerance_j);
      ++after;
    }
  }
  EXPECT_GT(before, 100u);
  EXPECT_GT(after, 100u);
}

TEST(AccountRunBadInput, TraceWithoutTimeBaseNeedsAnOffset) {
  AccountInputs inputs;
  inputs.trace_files = {kRun / "trace.json"};
  inputs.power_files = {kRun / "power.csv"};
  try {
    load_account_run(inputs, standard_readers(), false);
    FAIL() << "no exception";
  } catch (const InvalidInput& e) {
    EXPECT_THAT(e.what(), HasSubstr("expected a time base"));
    EXPECT_THAT(e.what(), HasSubstr("--offset-us"));
  }
  inputs.explicit_offset_s = 1.0;  // far from the power trace: everything unmeasured, no crash
  const AccountRun run = load_account_run(inputs, standard_readers(), false);
  inputs.source_devices["synthetic"] = "cpu";
  const AccountRun assigned = load_account_run(inputs, standard_readers(), false);
  const Accounting a = account_energy(assigned.events, assigned.power, {});
  EXPECT_GT(a.devices[0].unmeasured_busy_time_s, 0.1);
  EXPECT_EQ(a.devices[0].attributed_energy_j, 0.0);
  // Without the assignment the synthetic source is left out with a warning, which says how to
  // assign it as the front end spells the setting.
  inputs.source_devices.clear();
  const AccountRun from_python =
      load_account_run(inputs, standard_readers(), false, SettingNames::kKeyword);
  bool keyword = false;
  for (const auto& w : from_python.warnings)
    keyword |=
        w.find("assign it with power_devices['synthetic']='cpu' (or gpu:N)") != std::string::npos;
  EXPECT_TRUE(keyword);
  inputs.explicit_offset_s.reset();
  try {
    load_account_run(inputs, standard_readers(), false, SettingNames::kKeyword);
    FAIL() << "no exception";
  } catch (const InvalidInput& e) {
    EXPECT_THAT(e.what(), HasSubstr("trace_epoch_offset_s or offset_us), found none"));
  }
  EXPECT_TRUE(run.power.empty());
  bool warned = false;
  for (const auto& w : run.warnings)
    warned |= w.find("not assigned to a device") != std::string::npos;
  EXPECT_TRUE(warned);
}

TEST(AccountRunBadInput, TwoTracesWithDifferentTimeBases) {
  const fs::path dir = temporary_directory("bases");
  write(dir / "kineto.json",
        R"({"baseTimeNanoseconds": 1700000000000000000, "traceEvents": [
             {"ph": "X", "cat": "cpu_op", "name": "a", "pid": 1, "tid": 1, "ts": 0, "dur": 10}]})");
  write(dir / "legacy.json",
        R"([{"ph": "X", "name": "b", "pid": 1, "tid": 1, "ts": 0, "dur": 10}])");
  AccountInputs inputs;
  inputs.trace_files = {dir / "kineto.json", dir / "legacy.json"};
  try {
    load_account_run(inputs, standard_readers(), false);
    FAIL() << "no exception";
  } catch (const InvalidInput& e) {
    EXPECT_THAT(e.what(), HasSubstr("legacy.json"));
  }
  fs::remove_all(dir);
}

TEST(AccountRunBadInput, EmptyPowerTraceAndBadSession) {
  const fs::path dir = temporary_directory("empty");
  write(dir / "power.csv",
        "# source: synthetic|synthetic|synthetic||||true|false|true\n"
        "source,time_s,epoch_s,power_w,energy_j,sm_clock_mhz,memory_clock_mhz,temperature_c,"
        "throttle_reasons\n");
  AccountInputs inputs;
  inputs.trace_files = {kRun / "trace.json"};
  inputs.power_files = {dir / "power.csv"};
  inputs.explicit_offset_s = 0.0;
  EXPECT_THROW(load_account_run(inputs, standard_readers(), false), InvalidInput);
  EXPECT_THROW(read_session_directory(dir), InvalidInput);  // no session.json
  for (const auto& [names, alternative] :
       {std::pair{SettingNames::kFlag, "(or pass --trace and --power)"},
        std::pair{SettingNames::kKeyword, "(or pass trace_files and power_files)"}}) {
    try {
      read_session_directory(dir, names);
      ADD_FAILURE() << "no exception";
    } catch (const InvalidInput& e) {
      EXPECT_THAT(e.what(), HasSubstr(alternative));
    }
  }
  write(dir / "session.json", R"({"format_version": 2})");
  try {
    read_session_directory(dir);
    FAIL() << "no exception";
  } catch (const InvalidInput& e) {
    EXPECT_THAT(e.what(), HasSubstr("format_version"));
  }
  write(dir / "session.json", R"({"format_version": 1, "power_file": "p.csv"})");
  EXPECT_THROW(read_session_directory(dir), InvalidInput);  // no trace_file
  fs::remove_all(dir);
}

// Security review: a session.json whose format_version (or a power device) was nested 100,000
// deep went into the message through a recursive dump() and overflowed the stack (SIGSEGV).
TEST(AccountRunBadInput, DeeplyNestedSessionIsInvalidInput) {
  const fs::path dir = temporary_directory("deep_session");
  for (const std::string& session :
       {R"({"format_version": )" + test_support::nested_json_arrays() + "}",
        R"({"format_version": 1, "trace_file": "t.json", "power_file": "p.csv",
            "power_devices": {"gpu0": )" +
            test_support::nested_json_arrays() + "}}"}) {
    write(dir / "session.json", session);
    try {
      read_session_directory(dir);
      ADD_FAILURE() << "no exception";
    } catch (const InvalidInput& e) {
      EXPECT_THAT(e.what(), HasSubstr("session.json: JSON nested deeper than 256 levels"));
    }
  }
  fs::remove_all(dir);
}

// Security review: one trace event named with 100,000 '/' (200 KB) crashed `nnergy account`
// (SIGSEGV in TreeBuilder::finish, one recursion per level of the EDD), and at 10,000 levels its
// --json document was 1.8 GB. The EDD now stops at kMaxEddDepth levels, with a warning.
TEST(AccountRun, AnEventNamedDeeperThanTheEddNestsIsCappedWithAWarning) {
  const fs::path dir = temporary_directory("deep_name");
  std::string name;
  for (int i = 0; i < 100000; ++i) name += "m/";
  name += "op";
  write(dir / "trace.json",
        R"({"baseTimeNanoseconds": 1700000000000000000, "traceEvents": [
             {"ph": "X", "cat": "cpu_op", "name": ")" +
            name + R"(", "pid": 1, "tid": 1, "ts": 1000, "dur": 500000},
             {"ph": "X", "cat": "cpu_op", "name": "shallow", "pid": 1, "tid": 1, "ts": 600000,
              "dur": 100000}]})");
  std::string power =
      "# source: synthetic|synthetic|synthetic||||true|false|true\n"
      "source,time_s,epoch_s,power_w,energy_j,sm_clock_mhz,memory_clock_mhz,temperature_c,"
      "throttle_reasons\n";
  for (int k = 0; k <= 10; ++k) {
    power += "synthetic," + std::to_string(0.1 * k) + "," + std::to_string(1700000000 + 0.1 * k) +
             ",100,,,,,0\n";
  }
  write(dir / "power.csv", power);
  AccountInputs inputs;
  inputs.trace_files = {dir / "trace.json"};
  inputs.power_files = {dir / "power.csv"};
  inputs.source_devices["synthetic"] = "cpu";
  const AccountRun run = load_account_run(inputs, standard_readers(), false);
  std::size_t deep_warnings = 0;
  for (const std::string& w : run.warnings) {
    if (w.find("1 event name nests deeper than 64 module levels") != std::string::npos) {
      ++deep_warnings;
      EXPECT_LT(w.size(), 300u);
    }
  }
  EXPECT_EQ(deep_warnings, 1u);

  const Accounting accounting = account_energy(run.events, run.power, {});
  const Footprint tef = tensor_energy_footprint(run.events, accounting);
  const std::vector<SummarizeRule> rules = default_summarize_rules();
  const Footprint stef = summarize(tef, rules);
  const nlohmann::ordered_json document =
      accounting_json(run, accounting, tef, stef, rules, RunContext{});
  std::size_t levels = 0;
  for (const nlohmann::ordered_json* node = &document["edd"]; !(*node)["children"].empty();
       node = &(*node)["children"][0]) {
    ++levels;
  }
  EXPECT_EQ(levels, kMaxEddDepth);
  EXPECT_LT(core::json_text(document).size(), 1000000u);
  fs::remove_all(dir);
}

TEST(AccountRun, DeviceOfSourceFollowsKindsAndAssignments) {
  measure::SourceInfo gpu;
  gpu.id = "nvml:1";
  gpu.kind = "gpu";
  EXPECT_EQ(device_of_source(gpu, {}), "gpu:1");
  measure::SourceInfo package;
  package.id = "rapl:package-0";
  package.kind = "cpu-package";
  EXPECT_EQ(device_of_source(package, {}), "cpu");
  measure::SourceInfo synthetic;
  synthetic.id = "synthetic";
  synthetic.kind = "synthetic";
  EXPECT_EQ(device_of_source(synthetic, {}), "");
  EXPECT_EQ(device_of_source(synthetic, {{"synthetic", "gpu:0"}}), "gpu:0");
  EXPECT_EQ(device_of_source(gpu, {{"nvml:1", "none"}}), "");
}

}  // namespace
}  // namespace nnergy::account
