// End-to-end tests of `nnergy compare` and of the HTML reports (`--html`) every command writes.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "nnergy_runner.h"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using nnergy::cli_test::read_file;
using nnergy::cli_test::run_cached;
using nnergy::cli_test::run_json;
using nnergy::cli_test::run_nnergy;
using nnergy::cli_test::RunResult;
using testing::HasSubstr;

// compare calls the same prediction as predict: the figures agree to rounding.
constexpr double kSameComputation = 1e-12;

const std::vector<std::string> kTwo = {"compare", "resnet50", "--devices", "a100-40gb,h100-sxm",
                                       "--batch", "32",       "--json"};

std::string fmt_clock(double mhz) {
  std::ostringstream out;
  out << mhz;
  return out.str();
}

const json* find_row(const json& j, const std::string& device, const std::string& clock) {
  for (const json& r : j["rows"])
    if (r["device"] == device && r["clock"] == clock) return &r;
  return nullptr;
}

TEST(Compare, BoostRowsAreWhatPredictSaysOnEachDevice) {
  const json j = run_json(kTwo);
  ASSERT_FALSE(j.is_null());
  ASSERT_EQ(j["rows"].size(), 4u) << j.dump(2);
  for (const std::string device : {"a100-40gb", "h100-sxm"}) {
    const json p = run_json({"predict", "resnet50", "--device", device, "--batch", "32", "--json"});
    const json* row = find_row(j, device, "boost");
    ASSERT_NE(row, nullptr) << device;
    const double time_s = p["totals"]["time_s"];
    const double energy_j = p["totals"]["energy_j"];
    EXPECT_NEAR((*row)["time_s"].get<double>(), time_s, kSameComputation * time_s);
    EXPECT_NEAR((*row)["energy_j"].get<double>(), energy_j, kSameComputation * energy_j);
    EXPECT_NEAR((*row)["time_per_sample_s"].get<double>(), time_s / 32, kSameComputation * time_s);
    EXPECT_NEAR((*row)["energy_per_sample_j"].get<double>(), energy_j / 32,
                kSameComputation * energy_j);
    EXPECT_DOUBLE_EQ((*row)["clock_mhz"].get<double>(), p["context"]["clock_mhz"].get<double>());
  }
}

TEST(Compare, EnergyOptimalRowIsPredictAtTheSweepsOptimum) {
  const json j = run_json(kTwo);
  const json sweep = run_json(
      {"predict", "resnet50", "--device", "h100-sxm", "--batch", "32", "--sweep-clocks", "--json"});
  ASSERT_FALSE(j.is_null() || sweep.is_null());
  const double clock = sweep["clock_sweep"]["energy_optimal_clock_mhz"];
  const json* row = find_row(j, "h100-sxm", "energy-optimal");
  ASSERT_NE(row, nullptr);
  EXPECT_DOUBLE_EQ((*row)["clock_mhz"].get<double>(), clock);
  const json at = run_json({"predict", "resnet50", "--device", "h100-sxm", "--batch", "32",
                            "--clock-mhz", fmt_clock(clock), "--json"});
  const double energy_j = at["totals"]["energy_j"];
  EXPECT_NEAR((*row)["energy_j"].get<double>(), energy_j, kSameComputation * energy_j);
  // The optimum uses no more energy than the boost clock.
  EXPECT_LE((*row)["energy_j"].get<double>(), find_row(j, "h100-sxm", "boost")->at("energy_j"));
}

TEST(Compare, RanksAndParetoFrontFollowTheFigures) {
  const json j = run_json(kTwo);
  ASSERT_FALSE(j.is_null());
  for (const std::string clock : {"boost", "energy-optimal"}) {
    const json& a = *find_row(j, "a100-40gb", clock);
    const json& h = *find_row(j, "h100-sxm", clock);
    const bool a_faster = a["time_per_sample_s"] < h["time_per_sample_s"];
    EXPECT_EQ(a["rank_time"], a_faster ? 1 : 2) << clock;
    EXPECT_EQ(h["rank_time"], a_faster ? 2 : 1) << clock;
    const bool a_frugal = a["energy_per_sample_j"] < h["energy_per_sample_j"];
    EXPECT_EQ(a["rank_energy"], a_frugal ? 1 : 2) << clock;
  }
  // A row is on the front exactly when no other row of its batch dominates it.
  for (const json& r : j["rows"]) {
    bool dominated = false;
    for (const json& o : j["rows"]) {
      const bool no_worse = o["time_s"] <= r["time_s"] && o["energy_j"] <= r["energy_j"];
      const bool better = o["time_s"] < r["time_s"] || o["energy_j"] < r["energy_j"];
      dominated = dominated || (no_worse && better);
    }
    EXPECT_EQ(r["pareto"].get<bool>(), !dominated) << r.dump();
  }
}

TEST(Compare, DefaultIsEveryGpuAndNamesTheDevicesLeftOut) {
  const json j = run_json({"compare", "resnet18", "--precision", "bf16", "--json"});
  ASSERT_FALSE(j.is_null());
  std::set<std::string> ids;
  for (const json& d : j["devices"]) ids.insert(d["id"]);
  EXPECT_TRUE(ids.count("h100-sxm") && ids.count("a100-40gb")) << j["devices"].dump();
  EXPECT_FALSE(ids.count("cpu-core")) << "a CPU is not a GPU";
  EXPECT_FALSE(ids.count("titan-x")) << "the Maxwell Titan X has no bf16";
  std::string notes;
  for (const json& n : j["notes"]) notes += n.get<std::string>() + "\n";
  EXPECT_THAT(notes, HasSubstr("titan-x left out: no bf16 peak"));
  for (const json& d : j["devices"]) {
    const std::string model = d["time_model"];
    EXPECT_TRUE(model == "calibrated" || model == "transferred" || model == "estimated") << model;
    EXPECT_FALSE(d["provenance"].get<std::string>().empty()) << d["id"];
  }
}

TEST(Compare, BatchSweepMarksHostBoundAndBatchesThatDoNotFit) {
  const json j = run_json({"compare", "resnet50", "--devices", "h100-sxm,t4", "--batches", "1,4096",
                           "--mode", "training", "--json"});
  ASSERT_FALSE(j.is_null());
  EXPECT_EQ(j["batches"], json::array({1, 4096}));
  const json* small = nullptr;
  const json* huge = nullptr;
  for (const json& r : j["rows"]) {
    if (r["device"] == "h100-sxm" && r["batch"] == 1 && r["clock"] == "boost") small = &r;
    if (r["device"] == "t4" && r["batch"] == 4096 && r["clock"] == "boost") huge = &r;
  }
  ASSERT_TRUE(small && huge);
  EXPECT_TRUE((*small)["host_bound"].get<bool>()) << "batch 1 on an H100 waits for the host";
  EXPECT_FALSE((*huge)["fits_memory"].get<bool>()) << "a 4096 batch does not fit in 16 GB";
  EXPECT_EQ((*huge)["rank_energy"], 0) << "a row that does not fit is not ranked";
  for (const json& d : j["devices"]) EXPECT_TRUE(d["largest_fitting_batch"].is_number()) << d;
}

// As predict decides: a peak over the device's memory by less than the estimate's uncertainty
// (ResNet-18 training at batch 800 on a 16 GiB T4: about 18.0 GB, 1.05x) is ranked and marked
// "may not fit"; beyond the band (batch 4096, above) it is not ranked.
TEST(Compare, APeakWithinTheMemoryEstimatesUncertaintyMayNotFitAndIsRanked) {
  const json j = run_json(
      {"compare", "resnet18", "--devices", "t4", "--batch", "800", "--mode", "training", "--json"});
  ASSERT_FALSE(j.is_null());
  const json& row = j["rows"][0];
  EXPECT_GT(row["memory_peak_bytes"].get<double>(), 16.0 * (1 << 30));
  EXPECT_TRUE(row["fits_memory"].get<bool>()) << row;
  EXPECT_TRUE(row["may_not_fit"].get<bool>()) << row;
  EXPECT_EQ(row["rank_energy"], 1) << "ranked, as predict warns and does not refuse";
  const RunResult text = run_nnergy(
      {"compare", "resnet18", "--devices", "t4", "--batch", "800", "--mode", "training"});
  ASSERT_EQ(text.exit_code, 0) << text;
  EXPECT_THAT(text.out, HasSubstr("may not fit ("));
}

TEST(Compare, TextAndCsvShowTheRanking) {
  const RunResult& text = run_cached({"compare", "resnet50", "--devices", "a100-40gb,h100-sxm"});
  ASSERT_EQ(text.exit_code, 0) << text;
  EXPECT_THAT(text.out, HasSubstr("ranked by energy per sample at the boost clock"));
  EXPECT_THAT(text.out, HasSubstr("predicted by the analytical model, not measured"));
  EXPECT_THAT(text.out, HasSubstr("where each device's time model comes from"));
  const RunResult& csv =
      run_cached({"compare", "resnet50", "--devices", "a100-40gb,h100-sxm", "--csv"});
  ASSERT_EQ(csv.exit_code, 0) << csv;
  EXPECT_THAT(csv.out, HasSubstr("\ndevice,batch,clock,clock_mhz,"));
  EXPECT_THAT(csv.out, HasSubstr("\nh100-sxm,1,energy-optimal,"));
}

TEST(Compare, BadInputIsNamedWithExitCode2) {
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{"compare", "resnet50", "--devices", "a100-40gb,h100-sxn"}, "h100-sxn"},
      {{"compare", "resnet50", "--devices", "a100-40gb,,h100-sxm"}, "--devices"},
      {{"compare", "resnet50", "--batches", "1,x"}, "--batches 1,x: 'x' is not a positive"},
      {{"compare", "resnet50", "--batches", "8,0"}, "'0' is not a positive"},
      {{"compare", "resnet50", "--batch", "8", "--batches", "1,2"}, "choose one"},
      {{"compare", "resnet50", "--json", "--csv"}, "choose one output format"},
      {{"compare", "resnet50", "--devices", "titan-x", "--precision", "bf16"}, "bf16"},
      {{"compare", "no-such-net"}, "no-such-net"},
  };
  for (const Case& c : cases) {
    const RunResult r = run_nnergy(c.args);
    EXPECT_EQ(r.exit_code, 2) << r;
    EXPECT_THAT(r.err, HasSubstr(c.message)) << r;
    EXPECT_TRUE(r.out.empty()) << r;
  }
}

// The JSON document inlined in an HTML report: the body of <script id="nnergy-data">.
json inlined_data(const std::string& page) {
  const std::string open = "<script type=\"application/json\" id=\"nnergy-data\">";
  const std::size_t start = page.find(open);
  if (start == std::string::npos) return nullptr;
  const std::size_t end = page.find("</script>", start);
  return json::parse(page.substr(start + open.size(), end - start - open.size()), nullptr, false);
}

// Runs a command with --html; returns false (and skips) when this build has no chart libraries.
bool html_available() {
  const fs::path probe = fs::temp_directory_path() / "nnergy_html_probe.html";
  const RunResult r = run_nnergy({"predict", "resnet18", "--html", probe.string()});
  fs::remove(probe);
  return !(r.exit_code == 2 && r.err.find("without the chart libraries") != std::string::npos);
}

TEST(HtmlReport, EveryCommandWritesOneSelfContainedPageWithItsData) {
  if (!html_available()) GTEST_SKIP() << "this build has no chart libraries (offline configure)";
  const fs::path dir = fs::temp_directory_path() / "nnergy_html_test";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string fixture = std::string(NNERGY_TEST_FIXTURE_DIR) + "/account/resnet18_cpu";
  const std::string data = NNERGY_TEST_DATA_DIR;
  struct Case {
    std::string kind;
    std::vector<std::string> args;
    std::string key;  // a key of the inlined document
  };
  const std::vector<Case> cases = {
      {"predict", {"predict", "resnet18", "--sweep-clocks"}, "roofline"},
      {"compare", {"compare", "resnet18", "--devices", "a100-40gb,l4"}, "rows"},
      {"account", {"account", fixture}, "timeline"},
      {"evaluate", {"evaluate", "--published", data + "/measured/h100/networks.json"}, "records"},
      {"archline",
       {"archline", "plot", data + "/measured/h100/archline_h100_sxm.csv", "--out",
        (dir / "archline.svg").string()},
       "charts"},
  };
  for (const Case& c : cases) {
    const fs::path file = dir / (c.kind + ".html");
    std::vector<std::string> args = c.args;
    args.insert(args.end(), {"--html", file.string()});
    const RunResult r = run_nnergy(args);
    ASSERT_EQ(r.exit_code, 0) << c.kind << "\n" << r;
    const std::string page = read_file(file);
    EXPECT_EQ(page.rfind("<!DOCTYPE html>", 0), 0u) << c.kind << ": " << page.substr(0, 80);
    EXPECT_LT(page.size(), 2u << 20) << c.kind << ": over 2 MiB";
    const json document = inlined_data(page);
    ASSERT_TRUE(document.is_object()) << c.kind;
    EXPECT_TRUE(document.contains(c.key)) << c.kind << " lacks " << c.key;
    EXPECT_TRUE(document.contains("context")) << c.kind;
    // No temporary file is left next to it.
    for (const auto& entry : fs::directory_iterator(dir))
      EXPECT_EQ(entry.path().string().find(".tmp."), std::string::npos) << entry.path();
  }
  fs::remove_all(dir);
}

TEST(HtmlReport, AnUnwritablePathIsExitCode2AndNothingIsWritten) {
  if (!html_available()) GTEST_SKIP() << "this build has no chart libraries (offline configure)";
  const RunResult r = run_nnergy({"predict", "resnet18", "--html", "/nonexistent-dir/report.html"});
  EXPECT_EQ(r.exit_code, 2) << r;
  EXPECT_THAT(r.err, HasSubstr("--html /nonexistent-dir/report.html"));
  EXPECT_TRUE(r.out.empty()) << r;
}

// -o/--output writes the document --json prints (the context's command line aside).
TEST(OutputFile, IsTheDocumentJsonPrints) {
  const fs::path dir = fs::temp_directory_path() / "nnergy_output_test";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::vector<std::vector<std::string>> commands = {
      {"predict", "resnet18", "--batch", "4"},
      {"compare", "resnet18", "--devices", "a100-40gb,l4"}};
  for (const std::vector<std::string>& command : commands) {
    const fs::path file = dir / (command.front() + ".json");
    std::vector<std::string> with_file = command;
    with_file.insert(with_file.end(), {"-o", file.string()});
    const RunResult written = run_nnergy(with_file);
    ASSERT_EQ(written.exit_code, 0) << written;
    EXPECT_EQ(written.out.find('{'), std::string::npos) << "the text stays on stdout";
    std::vector<std::string> with_json = command;
    with_json.push_back("--json");
    const RunResult printed = run_nnergy(with_json);
    ASSERT_EQ(printed.exit_code, 0) << printed;
    json a = json::parse(read_file(file));
    json b = json::parse(printed.out);
    ASSERT_TRUE(a.contains("context"));
    a.erase("context");
    b.erase("context");
    EXPECT_EQ(a, b) << command.front();
  }
  fs::remove_all(dir);
}

TEST(OutputFile, AFailingFileLeavesTheOthersUnwritten) {
  if (!html_available()) GTEST_SKIP() << "this build has no chart libraries (offline configure)";
  const fs::path dir = fs::temp_directory_path() / "nnergy_output_fail";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const RunResult r = run_nnergy({"predict", "resnet18", "--html", (dir / "r.html").string(), "-o",
                                  "/nonexistent-dir/r.json"});
  EXPECT_EQ(r.exit_code, 2) << r;
  EXPECT_THAT(r.err, HasSubstr("--output /nonexistent-dir/r.json"));
  EXPECT_TRUE(r.out.empty()) << r;
  EXPECT_TRUE(fs::is_empty(dir)) << "the HTML report was written without the JSON";
  fs::remove_all(dir);
}

TEST(HtmlReport, NamesFromTheInputCannotEndTheDataElement) {
  if (!html_available()) GTEST_SKIP() << "this build has no chart libraries (offline configure)";
  // An ONNX file name with markup in it (a file name cannot hold "/", so no "</script>"; the
  // writer escapes every "<" alike): the network's name goes into the page's data.
  const fs::path dir = fs::temp_directory_path() / "nnergy_html_names";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path odd = dir / "x<!--<script><b>.onnx";
  fs::copy_file(fs::path(NNERGY_TEST_DATA_DIR) / "zoo" / "resnet18.onnx", odd);
  const fs::path file = dir / "r.html";
  const RunResult r = run_nnergy({"predict", odd.string(), "--html", file.string()});
  ASSERT_EQ(r.exit_code, 0) << r;
  const std::string page = read_file(file);
  const json document = inlined_data(page);
  ASSERT_TRUE(document.is_object());
  EXPECT_THAT(document["context"]["network"]["name"].get<std::string>(),
              HasSubstr("<!--<script><b>"));
  EXPECT_EQ(page.find("<!--<script><b>"), std::string::npos) << "written as \\u003c in the data";
  fs::remove_all(dir);
}

}  // namespace
