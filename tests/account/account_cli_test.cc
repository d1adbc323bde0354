// `nnergy account` end to end: the committed real run, outputs, bad input (exit 2, nothing
// written), precision, and a live nnergy_torch session where torch is importable.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "nnergy_runner.h"
#include "temp_dir_test.h"

namespace {

namespace fs = std::filesystem;
using nnergy::cli_test::read_file;
using nnergy::cli_test::run_nnergy;
using nnergy::cli_test::RunResult;
using ::testing::HasSubstr;

const fs::path kRun = fs::path(NNERGY_TEST_FIXTURE_DIR) / "account" / "resnet18_cpu";

std::string quote(const std::string& word) {
  std::string quoted = "'";
  for (char c : word) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

class AccountCli : public nnergy::test_support::TempDirTest {
 protected:
  // Runs a shell command line (words quoted by the caller) and collects both streams.
  RunResult shell(const std::string& command) const {
    const fs::path out = dir_ / "stdout.txt";
    const fs::path err = dir_ / "stderr.txt";
    const std::string line = command + " >" + quote(out.string()) + " 2>" + quote(err.string());
    const int status = std::system(line.c_str());
    RunResult r;
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.out = read_file(out);
    r.err = read_file(err);
    return r;
  }
};

TEST_F(AccountCli, AccountsTheCommittedRunAndWritesEveryOutput) {
  const fs::path json = dir_ / "a.json";
  const fs::path csv = dir_ / "a.csv";
  const fs::path folded = dir_ / "a.folded";
  const fs::path perfetto = dir_ / "a.perfetto.json";
  const RunResult r =
      run_nnergy({"account", kRun.string(), "--level", "2", "--top", "5", "--summarize",
                  R"(layer\d+\.\d+=block)", "-o", json.string(), "--csv", csv.string(), "--folded",
                  folded.string(), "--perfetto", perfetto.string()});
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_THAT(r.out, HasSubstr("Energy distribution diagram"));
  EXPECT_THAT(r.out, HasSubstr("Top 5 energy hotspots"));
  EXPECT_THAT(r.out, HasSubstr("Top 5 power hotspots"));
  EXPECT_THAT(r.out, HasSubstr("Passes (attributed): forward"));
  EXPECT_THAT(r.out, HasSubstr("ResNet.block.conv2/aten::convolution_backward"));
  EXPECT_THAT(r.out, HasSubstr("Conservation: attributed"));
  EXPECT_THAT(r.out, HasSubstr("unmeasured event time 0 s"));

  const nlohmann::json j = nlohmann::json::parse(read_file(json));
  EXPECT_EQ(j["context"]["tool"], "nnergy");
  EXPECT_THAT(j["context"]["command_line"].get<std::string>(), HasSubstr("account"));
  const auto& device = j["devices"][0];
  EXPECT_EQ(device["device"], "cpu");
  double sum_j = 0;
  for (const auto& e : j["tef"]["entries"]) sum_j += e["energy_j"].get<double>();
  // The recorded power is a synthetic constant 100 W: attributed energy is 100 W × busy time.
  constexpr double kTolerance_j = 1e-6;
  EXPECT_NEAR(sum_j, device["attributed_energy_j"].get<double>(), kTolerance_j);
  EXPECT_NEAR(device["attributed_energy_j"].get<double>(),
              100.0 * device["busy_time_s"].get<double>(), kTolerance_j);
  EXPECT_NEAR(device["attributed_energy_j"].get<double>() + device["idle_energy_j"].get<double>(),
              device["measured_energy_j"].get<double>(), kTolerance_j);
  EXPECT_NEAR(j["edd"]["energy_j"].get<double>(), sum_j, kTolerance_j);

  EXPECT_THAT(read_file(csv), HasSubstr("name,energy_j,time_s,power_w"));
  const std::string folded_text = read_file(folded);
  std::istringstream lines(folded_text);
  std::string line;
  const std::regex folded_line(R"([^ ]+ \d+)");
  std::size_t count = 0;
  while (std::getline(lines, line)) {
    EXPECT_TRUE(std::regex_match(line, folded_line)) << line;
    ++count;
  }
  EXPECT_GT(count, 50u);

  const nlohmann::json p = nlohmann::json::parse(read_file(perfetto));
  bool counter = false;
  bool energy = false;
  for (const auto& e : p["traceEvents"]) {
    if (e["ph"] == "C" && e["name"] == "CPU power" && e["args"]["W"] == 100.0) counter = true;
    if (e["ph"] == "X" && e["args"].contains("energy_j")) energy = true;
  }
  EXPECT_TRUE(counter);
  EXPECT_TRUE(energy);
}

// The text is bounded by --top (default 25) and counts what it leaves out; quantities carry SI
// prefixes as predict's do.
TEST_F(AccountCli, TextTablesAreBoundedByTopAndUseUnitPrefixes) {
  const RunResult r = run_nnergy({"account", kRun.string()});
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_THAT(r.out, HasSubstr("Top 25 energy hotspots"));
  EXPECT_THAT(r.out, HasSubstr("more hotspots (--top 0 lists all)"));
  EXPECT_THAT(r.out, ::testing::ContainsRegex(" [0-9.]+ mJ "));
  const RunResult all = run_nnergy({"account", kRun.string(), "--top", "0"});
  ASSERT_EQ(all.exit_code, 0) << all;
  EXPECT_THAT(all.out, ::testing::Not(HasSubstr("lists all")));
  EXPECT_GT(all.out.size(), r.out.size());
}

// The session's only source left out: no device has power, which the output says instead of
// listing 0 J everywhere.
TEST_F(AccountCli, ARunWithoutAssignedPowerSaysSo) {
  const RunResult r = run_nnergy({"account", kRun.string(), "--power-device", "synthetic=none"});
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_THAT(r.out, HasSubstr("No energy attributed: no device of this run has power samples"));
  EXPECT_THAT(r.out, ::testing::Not(HasSubstr("energy hotspots")));
  EXPECT_THAT(r.out, HasSubstr("cpu: no power samples for this device"));
  EXPECT_THAT(r.out, HasSubstr("--power-device SOURCE=cpu"));
}

TEST_F(AccountCli, CompareOfAFootprintWithItselfIsOne) {
  const fs::path json = dir_ / "a.json";
  ASSERT_EQ(run_nnergy({"account", kRun.string(), "-o", json.string()}).exit_code, 0);
  const RunResult r = run_nnergy({"account", "compare", json.string(), json.string()});
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_THAT(r.out, HasSubstr("1.0000"));
}

TEST_F(AccountCli, JsonPrintsTheDocumentThatOutputWrites) {
  const fs::path json = dir_ / "a.json";
  ASSERT_EQ(run_nnergy({"account", kRun.string(), "-o", json.string()}).exit_code, 0);
  const RunResult printed = run_nnergy({"account", kRun.string(), "--json"});
  ASSERT_EQ(printed.exit_code, 0) << printed;
  const nlohmann::json out = nlohmann::json::parse(printed.out);
  const nlohmann::json file = nlohmann::json::parse(read_file(json));
  EXPECT_EQ(out["tef"], file["tef"]);
  EXPECT_EQ(out["stef"], file["stef"]);
  EXPECT_EQ(out["devices"], file["devices"]);
  // compare reads what --json prints.
  const fs::path printed_file = dir_ / "printed.json";
  std::ofstream(printed_file) << printed.out;
  const RunResult same = run_nnergy({"account", "compare", printed_file.string(), json.string()});
  ASSERT_EQ(same.exit_code, 0) << same;
  EXPECT_THAT(same.out, HasSubstr("1.0000"));
  // Several runs: one document each, and the assessment with --assess.
  const RunResult two = run_nnergy(
      {"account", kRun.string(), kRun.string(), "--assess", "--max-factor", "2", "--json"});
  ASSERT_EQ(two.exit_code, 0) << two;
  const nlohmann::json both = nlohmann::json::parse(two.out);
  ASSERT_EQ(both["runs"].size(), 2u);
  EXPECT_EQ(both["runs"][0]["tef"], file["tef"]);
  EXPECT_NEAR(both["assessment"]["widening"][0].get<double>(), 1.0, 1e-9);
  EXPECT_EQ(both["runs"][0]["sparsing"][0]["factor"], 2);
}

TEST_F(AccountCli, AJsonFileGivenAsARunSaysToUseOutput) {
  // `--json` takes no file: a file after it is read as a run.
  const RunResult r = run_nnergy({"account", kRun.string(), "--json", (dir_ / "a.json").string()});
  EXPECT_EQ(r.exit_code, 2) << r;
  EXPECT_THAT(r.err, HasSubstr("a.json': expected a session directory (with session.json), "
                               "found nothing; to write the accounting document to a file, use "
                               "--output"));
  EXPECT_FALSE(fs::exists(dir_ / "a.json"));
}

TEST_F(AccountCli, AssessPrintsSparsingWideningAndPairwiseSimilarity) {
  const RunResult r =
      run_nnergy({"account", kRun.string(), kRun.string(), "--assess", "--max-factor", "3"});
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_THAT(r.out, HasSubstr("ASSS"));
  EXPECT_THAT(r.out, HasSubstr("2x "));
  EXPECT_THAT(r.out, HasSubstr("ASSW (run 1 vs runs merged): runs 1..2 1.000"));
  EXPECT_THAT(r.out, HasSubstr("Pairwise similarity"));
}

TEST_F(AccountCli, TraceWithoutTimeBaseIsExit2) {
  const RunResult r = run_nnergy({"account", "--trace", (kRun / "trace.json").string(), "--power",
                                  (kRun / "power.csv").string()});
  EXPECT_EQ(r.exit_code, 2) << r;
  EXPECT_THAT(r.err, HasSubstr("--offset-us"));
  EXPECT_EQ(r.out, "");
}

TEST_F(AccountCli, EventsOutsideThePowerTraceAreReportedAsUnmeasured) {
  const RunResult r = run_nnergy({"account", "--trace", (kRun / "trace.json").string(), "--power",
                                  (kRun / "power.csv").string(), "--offset-us", "1000000",
                                  "--power-device", "synthetic=cpu"});
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_THAT(r.out, HasSubstr("Conservation: attributed 0 J + idle 0 J = measured 0 J"));
  EXPECT_THAT(r.out, ::testing::Not(HasSubstr("unmeasured event time 0 s")));
}

TEST_F(AccountCli, BadRuleIsExit2AndWritesNothing) {
  const fs::path json = dir_ / "never.json";
  const RunResult r =
      run_nnergy({"account", kRun.string(), "--summarize", "([=x", "-o", json.string()});
  EXPECT_EQ(r.exit_code, 2) << r;
  EXPECT_THAT(r.err, HasSubstr("--summarize"));
  EXPECT_FALSE(fs::exists(json));
  const RunResult device =
      run_nnergy({"account", kRun.string(), "--power-device", "synthetic=tpu"});
  EXPECT_EQ(device.exit_code, 2) << device;
  EXPECT_THAT(device.err, HasSubstr("--power-device"));
}

TEST_F(AccountCli, EmptyPowerTraceAndMissingRunAreExit2) {
  std::ofstream(dir_ / "power.csv")
      << "# source: synthetic|synthetic|synthetic||||true|false|true\n"
         "source,time_s,epoch_s,power_w,energy_j,sm_clock_mhz,memory_clock_mhz,temperature_c,"
         "throttle_reasons\n";
  const RunResult empty =
      run_nnergy({"account", "--trace", (kRun / "trace.json").string(), "--power",
                  (dir_ / "power.csv").string(), "--offset-us", "0"});
  EXPECT_EQ(empty.exit_code, 2) << empty;
  EXPECT_THAT(empty.err, HasSubstr("power"));
  const RunResult missing = run_nnergy({"account", (dir_ / "no-such-run").string()});
  EXPECT_EQ(missing.exit_code, 2) << missing;
  EXPECT_THAT(missing.err, HasSubstr("session directory"));
  std::ofstream(dir_ / "broken.json") << "[{\"name\": \"a\", \"ph\": \"X\", \"ts\": 1}]";
  const RunResult broken =
      run_nnergy({"account", "--trace", (dir_ / "broken.json").string(), "--power",
                  (kRun / "power.csv").string(), "--offset-us", "0"});
  EXPECT_EQ(broken.exit_code, 2) << broken;
  EXPECT_THAT(broken.err, HasSubstr("event 0"));
  EXPECT_THAT(broken.err, HasSubstr("\"dur\""));
}

// A Kineto trace with a GPU kernel: CPU events take the CPU's (RAPL) power, the kernel the GPU's
// (NVML) power, and the kernel is named after the op that launched it.
TEST_F(AccountCli, KinetoTraceTakesEachDevicesOwnPower) {
  // Base time 1700000000 s; events at 100–400 µs. Power: GPU 300 W, CPU package 50 W, sampled
  // every 100 µs around them.
  std::ofstream(dir_ / "kineto.json") << R"json({"baseTimeNanoseconds": 1700000000000000000,
    "traceEvents": [
      {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 100, "dur": 100,
       "args": {"External id": 1}},
      {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": 150, "dur": 200,
       "args": {"External id": 1, "device": 0}}]})json";
  std::ostringstream csv;
  csv << "# source: nvml:0|gpu|H100||||false|false|true\n"
         "# source: rapl:package-0|cpu-package|package-0||||false|false|true\n"
         "source,time_s,epoch_s,power_w,energy_j,sm_clock_mhz,memory_clock_mhz,temperature_c,"
         "throttle_reasons\n";
  for (int k = 0; k <= 6; ++k) {
    const double t = 1700000000.0 + 1e-4 * k;
    csv << "nvml:0," << 1e-4 * k << "," << std::setprecision(17) << t << ",300,,,,,0\n";
    csv << "rapl:package-0," << 1e-4 * k << "," << std::setprecision(17) << t << ",50,,,,,0\n";
  }
  std::ofstream(dir_ / "power.csv") << csv.str();
  const fs::path json = dir_ / "k.json";
  const RunResult r = run_nnergy({"account", "--trace", (dir_ / "kineto.json").string(), "--power",
                                  (dir_ / "power.csv").string(), "-o", json.string()});
  ASSERT_EQ(r.exit_code, 0) << r;
  const nlohmann::json j = nlohmann::json::parse(read_file(json));
  ASSERT_EQ(j["tef"]["entries"].size(), 1u);  // the kernel joined its launcher's name
  const auto& e = j["tef"]["entries"][0];
  EXPECT_EQ(e["name"], "aten::mm");
  // Timestamps pass through doubles of UNIX time (~0.2 µs resolution): 1e-6 J is ample.
  constexpr double kTolerance_j = 1e-6;
  EXPECT_NEAR(e["cpu_energy_j"].get<double>(), 50.0 * 100e-6, kTolerance_j);
  EXPECT_NEAR(e["gpu_energy_j"].get<double>(), 300.0 * 200e-6, kTolerance_j);
  ASSERT_EQ(j["devices"].size(), 2u);
  EXPECT_EQ(j["devices"][0]["device"], "cpu");
  EXPECT_EQ(j["devices"][1]["device"], "gpu:0");
  EXPECT_EQ(j["devices"][1]["power_sources"][0], "nvml:0");
}

// A Kineto trace of the CPU side only (no kernel event, as torch 2.x's autograd profiler writes
// without use_device="cuda") next to GPU power: the GPU's energy cannot go anywhere, and the
// output says why instead of showing 0 J.
TEST_F(AccountCli, GpuPowerWithoutGpuEventsSaysTheProfilerMissedTheKernels) {
  std::ofstream(dir_ / "cpu_only.json") << R"json({"baseTimeNanoseconds": 1700000000000000000,
    "traceEvents": [
      {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 100, "dur": 100,
       "args": {"External id": 1}}]})json";
  std::ostringstream csv;
  csv << "# source: nvml:0|gpu|H100||||false|false|true\n"
         "source,time_s,epoch_s,power_w,energy_j,sm_clock_mhz,memory_clock_mhz,temperature_c,"
         "throttle_reasons\n";
  for (int k = 0; k <= 6; ++k) {
    csv << "nvml:0," << 1e-4 * k << "," << std::setprecision(17) << 1700000000.0 + 1e-4 * k
        << ",300,,,,,0\n";
  }
  std::ofstream(dir_ / "power.csv") << csv.str();
  const RunResult r = run_nnergy({"account", "--trace", (dir_ / "cpu_only.json").string(),
                                  "--power", (dir_ / "power.csv").string()});
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_THAT(r.out, HasSubstr("gpu:0: its power trace holds"));
  EXPECT_THAT(r.out, HasSubstr("the profiler recorded no GPU kernels"));
  EXPECT_THAT(r.out, HasSubstr("use_device=\"cuda\""));
}

// A live nnergy_torch session on Debian's torch: records a tiny model's two training steps with
// a synthetic power source, then accounts it.
TEST_F(AccountCli, PythonSessionRecordsARunThatAccounts) {
  if (std::system("/usr/bin/python3 -c 'import torch' >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "/usr/bin/python3 cannot import torch";
  }
  const fs::path script = dir_ / "train.py";
  const fs::path run = dir_ / "run";
  std::ofstream(script) << R"(import sys, torch, nnergy_torch
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.randn(8, 16)
with nnergy_torch.session(model, sys.argv[1], power_sources=["synthetic:constant=42"],
                          interval_ms=2) as s:
    for _ in range(2):
        opt.zero_grad()
        model(x).sum().backward()
        opt.step()
        s.step()
)";
  const RunResult recorded =
      shell("NNERGY_BIN=" + quote(nnergy::cli_test::nnergy_binary().string()) +
            " PYTHONPATH=" + quote(NNERGY_PYTHON_DIR) + " /usr/bin/python3 " +
            quote(script.string()) + " " + quote(run.string()));
  ASSERT_EQ(recorded.exit_code, 0) << recorded;
  const nlohmann::json session = nlohmann::json::parse(read_file(run / "session.json"));
  EXPECT_EQ(session["format_version"], 1);
  EXPECT_EQ(session["steps"], 2);
  EXPECT_EQ(session["power_devices"]["synthetic"], "cpu");
  EXPECT_TRUE(session["trace_epoch_offset_s"].is_number());
  const fs::path json = dir_ / "run.json";
  const RunResult r = run_nnergy({"account", run.string(), "-o", json.string()});
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_THAT(r.out, HasSubstr("Sequential.0/aten::addmm"));
  const nlohmann::json j = nlohmann::json::parse(read_file(json));
  const auto& device = j["devices"][0];
  // The power trace covers the program trace, and the constant 42 W gives 42 W × busy time.
  EXPECT_EQ(device["unmeasured_busy_time_s"].get<double>(), 0.0);
  EXPECT_GT(device["attributed_energy_j"].get<double>(), 0.0);
  EXPECT_NEAR(device["attributed_energy_j"].get<double>(),
              42.0 * device["busy_time_s"].get<double>(), 1e-6);
}

}  // namespace
