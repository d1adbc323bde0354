// End-to-end tests of the `nnergy` executable: exit codes, stdout and stderr as a user sees them.
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <spawn.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "nnergy_runner.h"
#include "temp_dir_test.h"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using nnergy::cli_test::read_file;
using nnergy::cli_test::run_cached;
using nnergy::cli_test::run_json;
using nnergy::cli_test::run_nnergy;
using nnergy::cli_test::RunResult;
using testing::HasSubstr;
using testing::Not;
using testing::StartsWith;

const fs::path kDataDir = NNERGY_TEST_DATA_DIR;
const fs::path kFixtureDir = NNERGY_TEST_FIXTURE_DIR;

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream stream(text);
  for (std::string line; std::getline(stream, line);) lines.push_back(line);
  return lines;
}

// Splits one CSV record; quoted fields may hold commas and doubled quotes.
std::vector<std::string> split_csv(const std::string& line) {
  std::vector<std::string> fields(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted && c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
      fields.back() += '"';
      ++i;
    } else if (c == '"') {
      quoted = !quoted;
    } else if (c == ',' && !quoted) {
      fields.emplace_back();
    } else {
      fields.back() += c;
    }
  }
  return fields;
}

std::set<std::string> zoo_names_on_disk() {
  std::set<std::string> names;
  for (const auto& entry : fs::directory_iterator(kDataDir / "zoo")) {
    if (entry.path().extension() == ".onnx") names.insert(entry.path().stem().string());
  }
  return names;
}

// Reads a "value prefix+unit" cell of the text totals, e.g. "28.6 ms", as a number in SI units.
// Returns NaN when the line does not match `label  value unit`.
double totals_value(const std::vector<std::string>& lines, const std::string& label,
                    const std::string& unit) {
  const std::regex pattern("^" + label + "\\s+(-?[0-9]+(?:\\.[0-9]+)?) (P|T|G|M|k|m|µ|n|p|)" +
                           unit + "(\\s|$)");
  static const std::map<std::string, double> kScale = {
      {"P", 1e15}, {"T", 1e12}, {"G", 1e9},  {"M", 1e6},  {"k", 1e3},
      {"", 1},     {"m", 1e-3}, {"µ", 1e-6}, {"n", 1e-9}, {"p", 1e-12}};
  for (const std::string& line : lines) {
    std::smatch match;
    if (std::regex_search(line, match, pattern)) {
      return std::stod(match[1].str()) * kScale.at(match[2].str());
    }
  }
  return std::nan("");
}

const std::vector<std::string> kResnet50Batch32 = {"predict", "resnet50",  "--device", "a100-40gb",
                                                   "--mode",  "inference", "--batch",  "32"};

std::vector<std::string> with(std::vector<std::string> args, const std::vector<std::string>& more) {
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

// --- predict, text ---------------------------------------------------------------------------

TEST(PredictText, ShowsLayerTableAndTotalsWithUnits) {
  const RunResult& r = run_cached(kResnet50Batch32);
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_EQ(r.err, "");
  const std::vector<std::string> lines = split_lines(r.out);
  const std::regex header(R"(^layer\s+op\s+output shape\s+.*time ms\s+power W\s+energy mJ)");
  EXPECT_TRUE(std::any_of(lines.begin(), lines.end(),
                          [&](const std::string& l) { return std::regex_search(l, header); }))
      << "no per-layer table header in:\n"
      << r.out;

  // The text totals must be the JSON totals, rounded to three significant digits.
  const json j = run_json(with(kResnet50Batch32, {"--json"}));
  ASSERT_TRUE(j.contains("totals")) << j.dump(2).substr(0, 2000);
  const json& t = j["totals"];
  const double time_s = totals_value(lines, "time", "s");
  const double energy_j = totals_value(lines, "energy", "J");
  const double power_w = totals_value(lines, "average power", "W");
  const double edp_j_s = totals_value(lines, "energy-delay product", "J·s");
  EXPECT_NEAR(time_s, t["time_s"].get<double>(), 0.006 * t["time_s"].get<double>()) << r.out;
  EXPECT_NEAR(energy_j, t["energy_j"].get<double>(), 0.006 * t["energy_j"].get<double>()) << r.out;
  EXPECT_NEAR(power_w, t["power_w"].get<double>(), 0.006 * t["power_w"].get<double>()) << r.out;
  EXPECT_NEAR(edp_j_s, t["edp_j_s"].get<double>(), 0.006 * t["edp_j_s"].get<double>()) << r.out;
}

// --- predict, JSON ---------------------------------------------------------------------------

TEST(PredictJson, ContextDescribesTheRun) {
  const json j = run_json(with(kResnet50Batch32, {"--json"}));
  ASSERT_TRUE(j.contains("context"));
  const json& c = j["context"];
  ASSERT_TRUE(c.contains("tool_version") && c["tool_version"].is_string()) << c.dump(2);
  EXPECT_FALSE(c["tool_version"].get<std::string>().empty());
  ASSERT_TRUE(c.contains("schema_version") && c["schema_version"].is_number_integer()) << c.dump(2);
  EXPECT_GE(c["schema_version"].get<int>(), 1);
  EXPECT_EQ(c.value("/device/id"_json_pointer, ""), "a100-40gb") << c.dump(2);
  EXPECT_EQ(c.value("predictor", ""), "analytical");
  // The A100 SXM4's boost clock (datasheet): the default clock is the boost clock.
  EXPECT_EQ(c.value("clock_mhz", 0.0), 1410.0);
  EXPECT_EQ(c.value("batch", 0), 32);
  EXPECT_EQ(c.value("mode", ""), "inference");
}

TEST(PredictJson, TotalsAreConsistentWithLayers) {
  const json j = run_json(with(kResnet50Batch32, {"--json"}));
  ASSERT_TRUE(j.contains("layers") && j.contains("totals"));
  ASSERT_FALSE(j["layers"].empty());
  double layer_energy = 0;
  for (const json& layer : j["layers"]) layer_energy += layer.at("energy_j").get<double>();
  const json& t = j["totals"];
  const double energy = t.at("energy_j").get<double>();
  const double time = t.at("time_s").get<double>();
  ASSERT_GT(energy, 0);
  ASSERT_GT(time, 0);
  EXPECT_NEAR(layer_energy, energy, 1e-9 * energy);
  EXPECT_NEAR(t.at("power_w").get<double>(), energy / time, 1e-9 * energy / time);
  EXPECT_NEAR(t.at("edp_j_s").get<double>(), energy * time, 1e-9 * energy * time);
}

TEST(PredictJson, Resnet50MacsMatchPublishedFigure) {
  // torchvision lists ResNet-50 at 4.09 GFLOPS, counting multiply-accumulates, at 224×224.
  const json j = run_json({"predict", "resnet50", "--batch", "1", "--json"});
  const double macs = j.value("/totals/mac_count"_json_pointer, 0.0);
  EXPECT_NEAR(macs, 4.09e9, 0.01 * 4.09e9);
}

// --- predict on user exports (tests/fixtures/user_exports) --------------------------------------

const fs::path kUserExports = kFixtureDir / "user_exports";

TEST(PredictUserExports, StaticBatchIsReboundAndTheBatchComputedIsReported) {
  const json j = run_json(
      {"predict", (kUserExports / "resnet18_opset13.onnx").string(), "--batch", "8", "--json"});
  ASSERT_TRUE(j.is_object());
  EXPECT_EQ(j["context"]["batch"], 8);
  // ResNet-18 at batch 8 is 8 x 1.814 GMAC (torchvision's figure): the work follows the batch.
  EXPECT_NEAR(j["totals"]["mac_count"].get<double>(), 8 * 1.814e9, 0.01 * 8 * 1.814e9)
      << j["totals"];
  bool noted = false;
  for (const auto& note : j["notes"])
    noted |= note.get<std::string>().find("fixes the batch at 1") != std::string::npos;
  EXPECT_TRUE(noted) << j["notes"];
}

TEST(PredictUserExports, StaticBatchIsKeptWithoutBatchFlag) {
  const json j = run_json({"predict", (kUserExports / "lstm_static.onnx").string(), "--json"});
  ASSERT_TRUE(j.is_object());
  EXPECT_EQ(j["context"]["batch"], 32);  // the file's batch, not 1
}

TEST(PredictUserExports, UnsoundRebindingExitsTwoWithTheExportFix) {
  const RunResult& r =
      run_cached({"predict", (kUserExports / "vit_b_32.onnx").string(), "--batch", "8"});
  EXPECT_EQ(r.exit_code, 2) << r;
  EXPECT_EQ(r.out, "") << r;
  EXPECT_EQ(split_lines(r.err).size(), 1U) << r;
  EXPECT_THAT(r.err, HasSubstr("vit_b_32.onnx: input 'input' has a fixed batch of 1"));
  EXPECT_THAT(r.err,
              HasSubstr("dynamic_axes={\"input\": {0: \"batch\"}, \"output\": {0: \"batch\"}}"));
}

TEST(PredictUserExports, DimNamingTheBatchIsTheBatchReported) {
  const json j = run_json(
      {"predict", (kUserExports / "resnet18_dynamic.onnx").string(), "--dim", "batch=4", "--json"});
  ASSERT_TRUE(j.is_object());
  EXPECT_EQ(j["context"]["batch"], 4);
}

TEST(PredictUserExports, AttentionLstmAndEinsumExportsPredict) {
  // {file, its symbolic dimensions other than the batch}
  const std::vector<std::pair<std::string, std::vector<std::string>>> files = {
      {"transformer_encoder.onnx", {"--dim", "seq=64"}},
      {"multihead_attention.onnx", {}},
      {"lstm_dynamic.onnx", {}},
      {"einsum_attention.onnx", {"--dim", "seq=64"}},
      {"gpt_block.onnx", {"--dim", "seq=64"}},
      {"swin_t_dynamic.onnx", {}}};
  for (const auto& [file, dims] : files) {
    const RunResult& r = run_cached(with(
        {"predict", (kUserExports / file).string(), "--batch", "2", "--mode", "training"}, dims));
    EXPECT_EQ(r.exit_code, 0) << file << "\n" << r;
    EXPECT_THAT(r.out, HasSubstr("batch 2")) << file;
  }
}

TEST(PredictText, UnknownOperatorsWithAMaterialShareAreWarnedFirst) {
  const RunResult& r = run_cached(
      {"predict", (kFixtureDir / "cli" / "unknown_op_net.onnx").string(), "--batch", "4"});
  ASSERT_EQ(r.exit_code, 0) << r;
  const std::string notes = r.out.substr(r.out.find("Notes:"));
  EXPECT_THAT(notes, StartsWith("Notes:\n  - WARNING: operators nnergy does not know (Det) hold "))
      << notes;
  EXPECT_THAT(r.out, HasSubstr("?")) << r;
}

class ExportExample : public nnergy::test_support::TempDirTest {};

// docs/examples/export_for_nnergy.py, run as a user would, then predicted in both modes.
TEST_F(ExportExample, ExportsPredictInBothModes) {
  if (std::system("/usr/bin/python3 -c 'import torch' >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "/usr/bin/python3 cannot import torch";
  }
  const fs::path script =
      fs::path(NNERGY_TEST_DATA_DIR).parent_path() / "docs" / "examples" / "export_for_nnergy.py";
  const std::string command =
      "/usr/bin/python3 '" + script.string() + "' '" + dir_.string() + "' >/dev/null 2>&1";
  ASSERT_EQ(std::system(command.c_str()), 0) << command;
  const RunResult& inference = run_nnergy({"predict", file("my_model.onnx"), "--batch", "32"});
  EXPECT_EQ(inference.exit_code, 0) << inference;
  EXPECT_THAT(inference.out, HasSubstr("batch 32"));
  const RunResult& training = run_nnergy(
      {"predict", file("my_model_training.onnx"), "--batch", "32", "--mode", "training"});
  EXPECT_EQ(training.exit_code, 0) << training;
  EXPECT_THAT(training.out, HasSubstr("BatchNormalization"));
}

TEST(PredictJson, TrainingAddsBackwardAndOptimizerStep) {
  const json training = run_json({"predict", "resnet50", "--device", "a100-40gb", "--mode",
                                  "training", "--batch", "32", "--json"});
  const json inference = run_json(with(kResnet50Batch32, {"--json"}));
  ASSERT_TRUE(training.contains("layers"));
  const auto& layers = training["layers"];
  EXPECT_TRUE(std::any_of(layers.begin(), layers.end(), [](const json& l) {
    return l.value("name", "") == "optimizer.step";
  })) << "no layer named optimizer.step";
  EXPECT_EQ(training.value("/context/mode"_json_pointer, ""), "training");
  // Backward costs about twice the forward pass (PALEO), plus the optimizer step.
  EXPECT_GT(training.value("/totals/time_s"_json_pointer, 0.0),
            2 * inference.value("/totals/time_s"_json_pointer, 0.0));
  ASSERT_TRUE(training.contains("notes"));
  EXPECT_TRUE(std::any_of(training["notes"].begin(), training["notes"].end(), [](const json& n) {
    return n.get<std::string>().find("optimizer") != std::string::npos;
  })) << training["notes"].dump(2);
}

// --- predict, CSV ----------------------------------------------------------------------------

TEST(PredictCsv, ContextCommentsHeaderAndOneRowPerLayer) {
  const RunResult& r = run_cached(with(kResnet50Batch32, {"--csv"}));
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_EQ(r.err, "");
  const std::vector<std::string> lines = split_lines(r.out);
  std::size_t first = 0;
  while (first < lines.size() && lines[first].rfind("# ", 0) == 0) ++first;
  EXPECT_GE(first, 1u) << "no leading context comments";
  ASSERT_LT(first, lines.size());
  const std::vector<std::string> header = split_csv(lines[first]);
  const auto energy_col = std::find(header.begin(), header.end(), "energy_j");
  ASSERT_NE(energy_col, header.end()) << lines[first];
  EXPECT_NE(std::find(header.begin(), header.end(), "time_s"), header.end()) << lines[first];

  const json j = run_json(with(kResnet50Batch32, {"--json"}));
  ASSERT_TRUE(j.contains("layers"));
  const std::size_t rows = lines.size() - first - 1;
  EXPECT_EQ(rows, j["layers"].size());
  // Every row has the header's columns, and the energies add up to the JSON total (9 digits).
  double energy = 0;
  for (std::size_t i = first + 1; i < lines.size(); ++i) {
    const std::vector<std::string> fields = split_csv(lines[i]);
    ASSERT_EQ(fields.size(), header.size()) << lines[i];
    energy += std::stod(fields[static_cast<std::size_t>(energy_col - header.begin())]);
  }
  const double total = j.value("/totals/energy_j"_json_pointer, 0.0);
  EXPECT_NEAR(energy, total, 1e-6 * total);
}

// --- clocks ----------------------------------------------------------------------------------

double a30_boost_mhz() {
  std::ifstream file(kDataDir / "devices.json");
  const json catalog = json::parse(file, nullptr, /*allow_exceptions=*/false);
  if (catalog.is_discarded()) return std::nan("");
  for (const json& d : catalog["devices"]) {
    if (d.value("id", "") == "a30") return d.at("clock_mhz").at("boost").get<double>();
  }
  return std::nan("");
}

const std::vector<std::string> kResnet50A30 = {"predict", "resnet50", "--device",
                                               "a30",     "--batch",  "32"};

TEST(PredictClocks, LowerClockIsSlower) {
  const json slow = run_json(with(kResnet50A30, {"--clock-mhz", "900", "--json"}));
  // Without --clock-mhz the prediction is at the boost clock (the sweep's totals included).
  const json boost = run_json(with(kResnet50A30, {"--sweep-clocks", "--json"}));
  EXPECT_EQ(slow.value("/context/clock_mhz"_json_pointer, 0.0), 900.0);
  EXPECT_EQ(boost.value("/context/clock_mhz"_json_pointer, 0.0), a30_boost_mhz());
  EXPECT_GT(slow.value("/totals/time_s"_json_pointer, 0.0),
            boost.value("/totals/time_s"_json_pointer, 0.0));
}

TEST(PredictClocks, APowerLimitLowersTheClockUntilThePowerFits) {
  const json free = run_json(with(kResnet50A30, {"--json"}));
  const double boost_w = free.value("/totals/power_w"_json_pointer, 0.0);
  const double limit = std::floor(0.85 * boost_w);
  auto g = [](double v) {  // as %g prints it
    std::ostringstream out;
    out << v;
    return out.str();
  };
  const json limited = run_json(with(kResnet50A30, {"--power-limit-w", g(limit), "--json"}));
  const json& l = limited.at("power_limit");
  EXPECT_TRUE(l.at("binding").get<bool>());
  EXPECT_TRUE(l.at("met").get<bool>());
  EXPECT_DOUBLE_EQ(l.at("unlimited_power_w").get<double>(), boost_w);
  const double clock = l.at("clock_mhz").get<double>();
  EXPECT_LT(clock, a30_boost_mhz());
  EXPECT_EQ(limited.value("/context/clock_mhz"_json_pointer, 0.0), clock);
  EXPECT_EQ(limited.value("/context/power_limit_w"_json_pointer, 0.0), limit);
  EXPECT_LE(limited.value("/totals/power_w"_json_pointer, 0.0), limit);
  EXPECT_GT(limited.value("/totals/time_s"_json_pointer, 0.0),
            free.value("/totals/time_s"_json_pointer, 0.0));
  // The text names the limit and the clock found.
  const RunResult text = run_nnergy(with(kResnet50A30, {"--power-limit-w", g(limit)}));
  EXPECT_THAT(text.out,
              HasSubstr("power limit " + g(limit) + " W: core clock " + g(clock) + " MHz"));
}

TEST(PredictClocks, SweepHasAnEnergyOptimumBelowBoost) {
  const json j = run_json(with(kResnet50A30, {"--sweep-clocks", "--json"}));
  ASSERT_TRUE(j.contains("clock_sweep")) << j.dump(2).substr(0, 2000);
  const json& sweep = j["clock_sweep"];
  const json& points = sweep.at("points");
  ASSERT_GT(points.size(), 10u);
  const double lowest = points.front().at("clock_mhz").get<double>();
  const double highest = points.back().at("clock_mhz").get<double>();
  EXPECT_EQ(highest, a30_boost_mhz());
  const double optimum = sweep.at("energy_optimal_clock_mhz").get<double>();
  // U shape: low clocks pay the baseline power for longer, high clocks pay for the voltage.
  EXPECT_GT(optimum, lowest);
  EXPECT_LT(optimum, highest);
  // Seed 000 measured the A30's energy optimum at 900 MHz.
  EXPECT_GE(optimum, 700.0);
  EXPECT_LE(optimum, 1200.0);
}

TEST(PredictJson, EnergyPrecisionRatio) {
  const json j = run_json(with(kResnet50Batch32, {"--error", "0.073", "--alpha", "1", "--json"}));
  ASSERT_TRUE(j.contains("energy_precision")) << j.dump(2).substr(0, 2000);
  const double per_sample = j.value("/totals/energy_per_sample_j"_json_pointer, 0.0);
  ASSERT_GT(per_sample, 0);
  EXPECT_NEAR(j["energy_precision"].value("ratio_j", 0.0), 0.073 * per_sample, 1e-12 * per_sample);
}

// --- zoo and devices -------------------------------------------------------------------------

TEST(Zoo, ListsEveryModelOfTheZooDirectory) {
  const std::set<std::string> on_disk = zoo_names_on_disk();
  ASSERT_FALSE(on_disk.empty()) << (kDataDir / "zoo");
  const RunResult& r = run_cached({"zoo"});
  ASSERT_EQ(r.exit_code, 0) << r;
  std::set<std::string> listed;
  for (const std::string& line : split_lines(r.out)) listed.insert(line.substr(0, line.find(' ')));
  for (const std::string& name : on_disk) EXPECT_EQ(listed.count(name), 1u) << name << "\n" << r;
}

TEST(Zoo, JsonNamesTheSameModels) {
  const json j = run_json({"zoo", "--json"});
  ASSERT_TRUE(j.is_array()) << j.dump(2).substr(0, 2000);
  std::set<std::string> names;
  for (const json& model : j) names.insert(model.value("name", ""));
  EXPECT_EQ(names, zoo_names_on_disk());
}

TEST(Devices, ListsTheCatalog) {
  const RunResult& r = run_cached({"devices"});
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_EQ(r.err, "");
  std::set<std::string> ids;
  for (const std::string& line : split_lines(r.out)) ids.insert(line.substr(0, line.find(' ')));
  EXPECT_EQ(ids.count("a100-40gb"), 1u) << r.out;
  EXPECT_EQ(ids.count("h100-sxm"), 1u) << r.out;
}

TEST(Devices, AliasShowsTheDevice) {
  const RunResult& r = run_cached({"devices", "a100"});
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_THAT(r.out, HasSubstr("A100"));
  EXPECT_THAT(r.out, HasSubstr("a100-40gb"));
  // Where the time and power models' parameters come from.
  EXPECT_THAT(r.out, HasSubstr("time model: calibrated on"));
  EXPECT_THAT(r.out, HasSubstr("power model: archline + operand power"));
}

TEST(Devices, JsonListsTheCatalog) {
  const json j = run_json({"devices", "--json"});
  ASSERT_TRUE(j.contains("devices") && j["devices"].is_array()) << j.dump(2).substr(0, 2000);
  std::set<std::string> ids;
  for (const json& d : j["devices"]) ids.insert(d.value("id", ""));
  EXPECT_EQ(ids.count("a100-40gb"), 1u);
  EXPECT_EQ(ids.count("h100-sxm"), 1u);
  for (const json& d : j["devices"]) {
    // Calibrated devices get the power fit too (a user device with its own efficiencies not).
    if (!d.value("/time_model/calibrated"_json_pointer, false)) continue;
    EXPECT_GT(d.value("/power_model/operand_share"_json_pointer, 0.0), 0) << d.value("id", "");
  }
}

// --- help ------------------------------------------------------------------------------------

class Help : public testing::TestWithParam<std::string> {};

TEST_P(Help, PrintsUsageOnStdout) {
  std::vector<std::string> args;
  if (!GetParam().empty()) args.push_back(GetParam());
  args.push_back("--help");
  const RunResult r = run_nnergy(args);
  EXPECT_EQ(r.exit_code, 0) << r;
  EXPECT_EQ(r.err, "");
  const std::regex usage("Usage: \\S*nnergy" + (GetParam().empty() ? "" : " " + GetParam()));
  EXPECT_TRUE(std::regex_search(r.out, usage)) << r.out;
}

INSTANTIATE_TEST_SUITE_P(Commands, Help,
                         testing::Values("", "predict", "zoo", "devices", "monitor"),
                         [](const testing::TestParamInfo<std::string>& param_info) {
                           return param_info.param.empty() ? std::string("nnergy")
                                                           : param_info.param;
                         });

// --- bad input: exit code 2, nothing on stdout, one line on stderr ---------------------------

void expect_bad_input(const RunResult& r, const std::vector<std::string>& mentions) {
  EXPECT_EQ(r.exit_code, 2) << r;
  EXPECT_EQ(r.out, "") << r;
  EXPECT_THAT(r.err, StartsWith("nnergy: error:")) << r;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << "not a single line:\n" << r;
  if (!r.err.empty()) {
    EXPECT_EQ(r.err.back(), '\n') << r;
  }
  for (const std::string& m : mentions) EXPECT_THAT(r.err, HasSubstr(m));
}

struct BadInputCase {
  std::string name;
  std::vector<std::string> args;
  std::vector<std::string> mentions;  ///< what the message must name
};

void PrintTo(const BadInputCase& c, std::ostream* os) {
  *os << "nnergy";
  for (const std::string& a : c.args) *os << " " << a;
}

class BadInput : public testing::TestWithParam<BadInputCase> {};

TEST_P(BadInput, ExitsTwoWithOneLineNamingTheProblem) {
  expect_bad_input(run_nnergy(GetParam().args), GetParam().mentions);
}

const BadInputCase kBadInputs[] = {
    {"MissingFile", {"predict", "does/not/exist.onnx"}, {"does/not/exist.onnx"}},
    {"UnknownDevice", {"predict", "resnet50", "--device", "nosuch"}, {"nosuch", "a100-40gb"}},
    {"ClockAboveRange",
     {"predict", "resnet50", "--clock-mhz", "5000"},
     {"--clock-mhz 5000", "210", "1410"}},
    {"ClockBelowRange",
     {"predict", "resnet50", "--clock-mhz", "10"},
     {"--clock-mhz 10", "210", "1410"}},
    {"PowerLimitAboveTdp",
     {"predict", "resnet50", "--power-limit-w", "500"},
     {"--power-limit-w 500", "400 W", "55 W"}},
    {"PowerLimitBelowIdle",
     {"predict", "resnet50", "--power-limit-w", "20"},
     {"--power-limit-w 20"}},
    {"PowerLimitWithClock",
     {"predict", "resnet50", "--power-limit-w", "200", "--clock-mhz", "900"},
     {"--power-limit-w", "--clock-mhz"}},
    {"PowerLimitWithSweep",
     {"predict", "resnet50", "--power-limit-w", "200", "--sweep-clocks"},
     {"--power-limit-w", "--sweep-clocks"}},
    {"BatchZero", {"predict", "resnet50", "--batch", "0"}, {"--batch 0"}},
    {"BatchNegative", {"predict", "resnet50", "--batch", "-3"}, {"--batch", "-3"}},
    {"BatchNotANumber", {"predict", "resnet50", "--batch", "abc"}, {"--batch", "abc"}},
    {"UnknownMode", {"predict", "resnet50", "--mode", "sleeping"}, {"sleeping", "training"}},
    {"UnknownPrecision", {"predict", "resnet50", "--precision", "fp8"}, {"fp8", "fp16"}},
    {"UnknownDim", {"predict", "resnet50", "--dim", "foo=3"}, {"foo"}},
    {"ErrorWithoutAlpha", {"predict", "resnet50", "--error", "0.1"}, {"--alpha"}},
    {"UnknownSubcommand", {"frobnicate"}, {"frobnicate"}},
    {"JsonAndCsv", {"predict", "resnet50", "--json", "--csv"}, {"--json", "--csv"}},
    {"MonitorWithoutCommand", {"monitor"}, {"expected a command"}},
    {"MonitorUnknownSource",
     {"monitor", "--source", "tpu", "--", "true"},
     {"--source tpu", "nvml", "synthetic"}},
    {"MonitorBadSynthetic",
     {"monitor", "--source", "synthetic:constant=-5", "--", "true"},
     {"constant"}},
    {"MonitorBadInterval", {"monitor", "--interval-ms", "0", "--", "true"}, {"--interval-ms 0"}},
    {"MonitorMissingCommand", {"monitor", "--", "no-such-command-xyz"}, {"no-such-command-xyz"}},
    {"MonitorBadPrometheusAddress",
     {"monitor", "--prometheus", "nonsense", "--", "true"},
     {"--prometheus 'nonsense'", "HOST:PORT"}},
    {"ExporterBadListenAddress", {"exporter", "--listen", "nonsense"}, {"--listen 'nonsense'"}},
    {"ExporterBadInterval",
     {"exporter", "--source", "synthetic:constant=1", "--interval-ms", "0"},
     {"--interval-ms 0"}},
    {"JobsMissingDirectory", {"jobs", "--dir", "/no/such/records"}, {"--dir", "/no/such/records"}},
    {"WordsAfterDashDashOutsideMonitor", {"predict", "resnet50", "--", "x"}, {"--", "x"}},
};

INSTANTIATE_TEST_SUITE_P(Cases, BadInput, testing::ValuesIn(kBadInputs),
                         [](const testing::TestParamInfo<BadInputCase>& param_info) {
                           return param_info.param.name;
                         });

TEST(BadInputModel, UnknownZooNameListsTheZoo) {
  const RunResult r = run_nnergy({"predict", "resnet5000"});
  expect_bad_input(r, {"resnet5000"});
  for (const std::string& name : zoo_names_on_disk()) EXPECT_THAT(r.err, HasSubstr(name));
}

TEST(BadInputModel, UninferableShapeNamesTheTensor) {
  const fs::path model = kFixtureDir / "cli" / "uninferable_reshape.onnx";
  ASSERT_TRUE(fs::exists(model)) << model << ": run tests/fixtures/cli/make_fixtures.py";
  const RunResult r = run_nnergy({"predict", model.string(), "--batch", "4"});
  expect_bad_input(r, {model.string(), "'Y'"});
  EXPECT_THAT(r.err, testing::AnyOf(HasSubstr("could not be inferred"),
                                    HasSubstr("shape inference failed")));
}

// A private directory for files a test writes, removed with everything in it.
class ScratchDir {
 public:
  ScratchDir() {
    std::string pattern = (fs::temp_directory_path() / "nnergy-cli-test-XXXXXX").string();
    if (mkdtemp(pattern.data()) != nullptr) path_ = pattern;
  }
  ~ScratchDir() {
    std::error_code ec;
    if (!path_.empty()) fs::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

TEST(BadInputModel, TruncatedOnnx) {
  ScratchDir dir;
  ASSERT_FALSE(dir.path().empty());
  std::ifstream source(kDataDir / "zoo" / "resnet50.onnx", std::ios::binary);
  std::string head(200, '\0');
  ASSERT_TRUE(source.read(head.data(), static_cast<std::streamsize>(head.size())));
  const fs::path truncated = dir.path() / "truncated.onnx";
  std::ofstream(truncated, std::ios::binary) << head;
  expect_bad_input(run_nnergy({"predict", truncated.string()}), {truncated.string()});
}

TEST(BadInputModel, TextFileNamedOnnx) {
  ScratchDir dir;
  ASSERT_FALSE(dir.path().empty());
  const fs::path text = dir.path() / "x.onnx";
  std::ofstream(text) << "this is a text file, not a protobuf\n";
  expect_bad_input(run_nnergy({"predict", text.string()}), {text.string()});
}

// --- monitor ---------------------------------------------------------------------------------

// A constant synthetic source has an exact energy counter, and linear interpolation of a linear
// counter is exact: the window's energy is 250 W × the window's length to rounding error.
TEST(Monitor, SyntheticConstantPowerGivesExactEnergy) {
  ScratchDir dir;
  ASSERT_FALSE(dir.path().empty());
  const fs::path trace = dir.path() / "run.csv";
  const RunResult r =
      run_nnergy({"monitor", "--json", "--interval-ms", "10", "--source", "synthetic:constant=250",
                  "-o", trace.string(), "--", "sleep", "0.5"});
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_EQ(r.out, "") << "the report goes to stderr, like perf stat";
  const json j = json::parse(r.err, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r;
  const double wall = j["wall_time_s"].get<double>();
  EXPECT_GE(wall, 0.5);
  ASSERT_EQ(j["sources"].size(), 1u);
  const json& s = j["sources"][0];
  EXPECT_EQ(s["energy_method"], "counter");
  EXPECT_NEAR(s["energy_j"].get<double>(), 250 * wall, 1e-9 * 250 * wall);
  EXPECT_NEAR(s["power_mean_w"].get<double>(), 250, 1e-9);
  EXPECT_LT(j["sampler_cpu_fraction_of_one_core"].get<double>(), 0.5);
  // The trace: context lines, a source line, the header, then rows with both timestamps.
  std::ifstream in(trace);
  std::string line;
  std::size_t rows = 0;
  bool header = false;
  while (std::getline(in, line)) {
    if (line.rfind("source,time_s,epoch_s,", 0) == 0) {
      header = true;
    } else if (header) {
      ++rows;
      EXPECT_THAT(line, StartsWith("synthetic,"));
    }
  }
  EXPECT_TRUE(header);
  EXPECT_GE(rows, 20u);  // 0.5 s at 10 ms, with a generous margin for a loaded machine
  EXPECT_FALSE(fs::exists(trace.string() + ".partial"));
}

// The total energy in kWh and its CO2e, with the carbon intensity named: the world's average by
// default (481 g/kWh, Ember 2023), or the user's grid.
TEST(Monitor, TotalEnergyInKwhAndItsCo2eNameTheGrid) {
  const RunResult by_default =
      run_nnergy({"monitor", "--json", "--source", "synthetic:constant=250", "--", "sleep", "0.2"});
  ASSERT_EQ(by_default.exit_code, 0) << by_default;
  const json d = json::parse(by_default.err, nullptr, false);
  ASSERT_FALSE(d.is_discarded()) << by_default;
  const double joules = d["sources"][0]["energy_j"].get<double>();
  EXPECT_DOUBLE_EQ(d["total_energy_j"].get<double>(), joules);
  EXPECT_NEAR(d["total_energy_kwh"].get<double>(), joules / 3.6e6, 1e-15);
  EXPECT_EQ(d["grid_gco2e_per_kwh"].get<double>(), 481);
  EXPECT_NEAR(d["co2e_g"].get<double>(), joules / 3.6e6 * 481, 1e-12);
  EXPECT_THAT(d["grid_source"].get<std::string>(), HasSubstr("--grid-gco2e-per-kwh"));

  const RunResult mine = run_nnergy({"monitor", "--grid-gco2e-per-kwh", "100", "--source",
                                     "synthetic:constant=250", "--", "sleep", "0.2"});
  ASSERT_EQ(mine.exit_code, 0) << mine;
  EXPECT_THAT(mine.err, HasSubstr("kWh"));
  EXPECT_THAT(mine.err, HasSubstr("CO2e at 100 g CO2e/kWh (as given)"));

  const RunResult bad = run_nnergy({"monitor", "--grid-gco2e-per-kwh", "-5", "--source",
                                    "synthetic:constant=250", "--", "true"});
  EXPECT_EQ(bad.exit_code, 2) << bad;
  EXPECT_THAT(bad.err, HasSubstr("--grid-gco2e-per-kwh -5: expected a carbon intensity"));
}

TEST(Monitor, ExitCodeIsTheCommandsAndAbsentSourcesAreExplained) {
  const RunResult r = run_nnergy({"monitor", "--", "sh", "-c", "echo child-output; exit 3"});
  EXPECT_EQ(r.exit_code, 3) << r;
  EXPECT_EQ(r.out, "child-output\n");
  EXPECT_THAT(r.err, HasSubstr("exited with code 3"));
  // This machine has neither a GPU driver nor readable RAPL zones: both are named with a reason.
  EXPECT_THAT(r.err, HasSubstr("nvml: unavailable"));
  EXPECT_THAT(r.err, HasSubstr("rapl: unavailable"));
}

TEST(Monitor, ReplaysAnNvidiaSmiLog) {
  const fs::path log = kFixtureDir / "measure" / "nvidia_smi_units.csv";
  const RunResult r =
      run_nnergy({"monitor", "--json", "--source", "replay:" + log.string(), "--", "sleep", "0.3"});
  ASSERT_EQ(r.exit_code, 0) << r;
  const json j = json::parse(r.err, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r;
  ASSERT_GE(j["sources"].size(), 1u);
  EXPECT_EQ(j["sources"][0]["name"], "NVIDIA A30");
  EXPECT_GT(j["sources"][0]["power_mean_w"].get<double>(), 0);
}

// The real NVML loading path against the fake library the measure tests build: a scripted GPU
// appears in detection and its energy counter is what the monitor reports.
TEST(Monitor, MeasuresAGpuThroughNvml) {
  ScratchDir dir;
  ASSERT_FALSE(dir.path().empty());
  const fs::path script = dir.path() / "nvml.script";
  {
    std::ofstream out(script);
    out << "gpus 1\nname 0 Fake H100\nclock_sm_mhz 0 1980\nclock_mem_mhz 0 2619\n"
        << "instant_mw 0 300000\npower_limit_mw 0 700000\nenergy_mj 0";
    for (int i = 0; i < 400; ++i) out << " " << i * 3000;  // 3 J more on every read
    out << "\n";
  }
  const std::vector<std::string> env = {"NNERGY_NVML_LIBRARY=" NNERGY_FAKE_NVML_PATH,
                                        "NNERGY_FAKE_NVML_SCRIPT=" + script.string()};
  const RunResult detect = run_nnergy({"devices", "--detect"}, env);
  ASSERT_EQ(detect.exit_code, 0) << detect;
  EXPECT_THAT(detect.out, HasSubstr("nvml:0"));
  EXPECT_THAT(detect.out, HasSubstr("Fake H100"));
  EXPECT_THAT(detect.out, HasSubstr("300.0 W"));

  const RunResult r =
      run_nnergy({"monitor", "--json", "--source", "nvml", "--", "sleep", "0.2"}, env);
  ASSERT_EQ(r.exit_code, 0) << r;
  const json j = json::parse(r.err, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r;
  ASSERT_EQ(j["sources"].size(), 1u);
  const json& gpu = j["sources"][0];
  EXPECT_EQ(gpu["name"], "Fake H100");
  EXPECT_EQ(gpu["energy_method"], "counter");
  EXPECT_GT(gpu["energy_j"].get<double>(), 0);
  EXPECT_DOUBLE_EQ(gpu["power_mean_w"].get<double>(), 300);  // 300000 mW
  EXPECT_EQ(gpu["dominant_sm_clock_mhz"].get<double>(), 1980);
}

// README: exit code 3 when a device is unavailable. A source asked for with --source is needed,
// so its absence is that error, raised before the command runs.
TEST(Monitor, ANamedSourceThatIsAbsentExitsThreeWithoutRunningTheCommand) {
  ScratchDir dir;
  ASSERT_FALSE(dir.path().empty());
  const fs::path ran = dir.path() / "ran";
  const RunResult r = run_nnergy({"monitor", "--source", "nvml", "--", "touch", ran.string()},
                                 {"NNERGY_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1"});
  EXPECT_EQ(r.exit_code, 3) << r;
  EXPECT_EQ(r.out, "");
  EXPECT_THAT(r.err, StartsWith("nnergy: error: --source nvml: the power source is not available"));
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r;
  EXPECT_FALSE(fs::exists(ran));
}

// A trace that `nnergy account` could attribute nothing with is warned about when recorded.
TEST(Monitor, RecordingATraceWithoutAnyPowerSourceWarns) {
  ScratchDir dir;
  ASSERT_FALSE(dir.path().empty());
  const fs::path trace = dir.path() / "power.csv";
  const RunResult r = run_nnergy({"monitor", "-o", trace.string(), "--", "true"},
                                 {"NNERGY_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1",
                                  "NNERGY_POWERCAP_ROOT=/nonexistent/powercap"});
  EXPECT_EQ(r.exit_code, 0) << r;
  EXPECT_THAT(r.err, HasSubstr(" warning: --output " + trace.string() +
                               ": the trace holds no power samples"));
  EXPECT_TRUE(fs::exists(trace));
}

TEST(DevicesDetect, ReportsWhatIsPresentAndWhyTheRestIsNot) {
  const RunResult r = run_nnergy({"devices", "--detect", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r;
  const json j = json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r;
  std::set<std::string> unavailable;
  for (const json& u : j["unavailable"]) unavailable.insert(u["source"].get<std::string>());
  // Whatever is absent is explained; on this CI machine that is both kinds.
  EXPECT_EQ(j["sources"].size() + unavailable.size() >= 2, true) << j.dump(2);
}

// --- profile and dataset ---------------------------------------------------------------------

// `nnergy profile` exists only in builds with LibTorch.
bool profile_available() {
  static const bool available = run_nnergy({"profile", "--help"}).exit_code == 0;
  return available;
}

// A fresh directory for one test's databases.
fs::path fresh_dir(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("nnergy_cli_test_" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

// ONNX names need not be valid UTF-8 (protobuf does not check proto2 strings). The JSON report
// writes an invalid byte as U+FFFD instead of failing with the JSON library's message.
TEST(PredictJson, NamesThatAreNotUtf8AreWrittenWithTheReplacementCharacter) {
  std::ifstream in(kDataDir / "zoo" / "resnet18.onnx", std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // The first node's name field: tag 0x1a, length 11, "/conv1/Conv"; its 'c' becomes 0xFF.
  const std::string field = std::string("\x1a\x0b") + "/conv1/Conv";
  const std::size_t at = bytes.find(field);
  ASSERT_NE(at, std::string::npos);
  bytes[at + 3] = static_cast<char>(0xFF);
  const fs::path model = fresh_dir("utf8") / "resnet18_bad_name.onnx";
  std::ofstream(model, std::ios::binary) << bytes;
  const RunResult r = run_nnergy({"predict", model.string(), "--json"});
  ASSERT_EQ(r.exit_code, 0) << r;
  const json j = json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded());
  EXPECT_NE(r.out.find("/\xEF\xBF\xBDonv1/Conv"), std::string::npos);
}

// AlexNet's three max-pooling layers in both modes: six short measurements.
std::vector<std::string> tiny_profile(const fs::path& db) {
  // One LibTorch thread: several test processes may share the cores, and spinning OpenMP
  // threads on an oversubscribed machine slow every op down many times.
  return {"profile",     "--models",  "alexnet", "--modes",   "inference,training",
          "--whitelist", "MaxPool",   "--db",    db.string(), "--min-time-s",
          "0.01",        "--repeats", "1",       "--threads", "1"};
}

std::size_t csv_data_rows(const std::string& csv) {
  std::size_t rows = 0;
  for (const std::string& line : split_lines(csv)) {
    if (!line.empty() && line[0] != '#') ++rows;
  }
  return rows > 0 ? rows - 1 : 0;  // the header
}

#define REQUIRE_PROFILE()                                                    \
  if (!profile_available()) {                                                \
    GTEST_SKIP() << "nnergy was built without LibTorch: no profile command"; \
  }

TEST(ProfileDryRun, CountsAndEstimatesWithoutWriting) {
  REQUIRE_PROFILE();
  const fs::path db = fresh_dir("dry_run") / "never.sqlite";
  std::vector<std::string> args = tiny_profile(db);
  args.push_back("--dry-run");
  const RunResult r = run_nnergy(args);
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_THAT(r.out, HasSubstr("dry run"));
  EXPECT_THAT(r.out, HasSubstr("total: 6 measurements to take, 0 already measured"));
  // 6 × (1 repeat + 2) × 0.01 s.
  EXPECT_THAT(r.out, HasSubstr("estimated duration: 0 s"));
  EXPECT_FALSE(fs::exists(db));
}

TEST(Profile, MeasuresThenResumesWithoutDuplicates) {
  REQUIRE_PROFILE();
  const fs::path db = fresh_dir("resume") / "cpu.sqlite";
  const RunResult first = run_nnergy(tiny_profile(db));
  ASSERT_EQ(first.exit_code, 0) << first;
  EXPECT_THAT(first.out, HasSubstr("measured: 6  skipped (already measured): 0  errors: 0"));
  EXPECT_THAT(first.out, HasSubstr("profiling overhead:"));
  EXPECT_THAT(first.out, HasSubstr("power and energy:"));
  // Without a terminal, one progress line per op plus the final one.
  EXPECT_THAT(first.err, HasSubstr("[0/6] inference MaxPool [1, 64, 55, 55]"));
  EXPECT_THAT(first.err, HasSubstr("[6/6] done"));

  const RunResult second = run_nnergy(tiny_profile(db));
  ASSERT_EQ(second.exit_code, 0) << second;
  EXPECT_THAT(second.out, HasSubstr("measured: 0  skipped (already measured): 6  errors: 0"));

  std::vector<std::string> dry = tiny_profile(db);
  dry.push_back("--dry-run");
  const RunResult planned = run_nnergy(dry);
  ASSERT_EQ(planned.exit_code, 0) << planned;
  EXPECT_THAT(planned.out, HasSubstr("total: 0 measurements to take, 6 already measured"));

  const RunResult exported = run_nnergy({"dataset", "export", "--db", db.string(), "--csv"});
  ASSERT_EQ(exported.exit_code, 0) << exported;
  EXPECT_EQ(csv_data_rows(exported.out), 6u) << exported;
  EXPECT_THAT(exported.out, HasSubstr("# row_count: 6"));
}

TEST(Profile, ShardsSplitTheCampaign) {
  REQUIRE_PROFILE();
  const fs::path dir = fresh_dir("shards");
  std::size_t total = 0;
  std::vector<std::string> merge = {"dataset", "merge", (dir / "all.sqlite").string()};
  for (const std::string shard : {"1/2", "2/2"}) {
    const fs::path db = dir / ("shard" + shard.substr(0, 1) + ".sqlite");
    std::vector<std::string> args = tiny_profile(db);
    args.insert(args.end(), {"--shard", shard});
    const RunResult r = run_nnergy(args);
    ASSERT_EQ(r.exit_code, 0) << r;
    const RunResult e = run_nnergy({"dataset", "export", "--db", db.string(), "--csv"});
    ASSERT_EQ(e.exit_code, 0) << e;
    total += csv_data_rows(e.out);
    merge.push_back(db.string());
  }
  EXPECT_EQ(total, 6u);
  const RunResult merged = run_nnergy(merge);
  ASSERT_EQ(merged.exit_code, 0) << merged;
  EXPECT_THAT(merged.out, HasSubstr("merged 2 file(s)"));
  EXPECT_THAT(merged.out, HasSubstr("op measurements: 6 added, 0 replaced, 0 kept"));
  const fs::path csv = dir / "all.csv";
  const RunResult e = run_nnergy(
      {"dataset", "export", "--db", (dir / "all.sqlite").string(), "--csv", "-o", csv.string()});
  ASSERT_EQ(e.exit_code, 0) << e;
  EXPECT_THAT(e.out, HasSubstr("wrote 6 measurement rows"));
  std::ifstream in(csv);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(csv_data_rows(text.str()), 6u);
}

TEST(Profile, SigintDiscardsTheMeasurementInFlightAndTheRerunCompletes) {
  REQUIRE_PROFILE();
  const fs::path dir = fresh_dir("sigint");
  const fs::path db = dir / "cpu.sqlite";
  // Longer measurements than the tiny campaign so that the signal lands mid-campaign.
  std::vector<std::string> args = tiny_profile(db);
  args[args.size() - 5] = "0.05";
  const pid_t pid = nnergy::cli_test::spawn_nnergy(args, dir / "out.txt", dir / "err.txt");
  ASSERT_GT(pid, 0);
  // Wait for the second progress line: the campaign is under way and has written a row.
  std::string err;
  for (int i = 0; i < 200 && std::count(err.begin(), err.end(), '\n') < 2; ++i) {
    usleep(20000);
    std::ifstream f(dir / "err.txt");
    std::stringstream text;
    text << f.rdbuf();
    err = text.str();
  }
  kill(pid, SIGINT);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 130);
  std::ifstream out_file(dir / "out.txt");
  std::stringstream out;
  out << out_file.rdbuf();
  EXPECT_THAT(out.str(), HasSubstr("interrupted"));

  const RunResult partial = run_nnergy({"dataset", "export", "--db", db.string(), "--csv"});
  ASSERT_EQ(partial.exit_code, 0) << partial;
  const std::size_t before = csv_data_rows(partial.out);
  const RunResult rerun = run_nnergy(args);
  ASSERT_EQ(rerun.exit_code, 0) << rerun;
  EXPECT_THAT(rerun.out, HasSubstr("skipped (already measured): " + std::to_string(before)));
  const RunResult full = run_nnergy({"dataset", "export", "--db", db.string(), "--csv"});
  ASSERT_EQ(full.exit_code, 0) << full;
  EXPECT_GT(csv_data_rows(full.out), before);
  EXPECT_THAT(rerun.out,
              HasSubstr("measured: " + std::to_string(csv_data_rows(full.out) - before)));
}

TEST(DatasetValidate, ComparesTheMeasuredNetworkWithTheSumOfItsOps) {
  REQUIRE_PROFILE();
  const fs::path db = fresh_dir("validate") / "cpu.sqlite";
  const RunResult profiled = run_nnergy(
      {"profile", "--networks", "squeezenet1_1", "--modes", "inference", "--whitelist", "MaxPool",
       "--db", db.string(), "--min-time-s", "0.01", "--repeats", "1", "--threads", "1"});
  ASSERT_EQ(profiled.exit_code, 0) << profiled;
  // SqueezeNet 1.1's three max-pooling layers have three input shapes, plus the network.
  EXPECT_THAT(profiled.out, HasSubstr("measured: 4  skipped (already measured): 0  errors: 0"));

  const RunResult text = run_nnergy({"dataset", "validate", "--db", db.string()});
  ASSERT_EQ(text.exit_code, 0) << text;
  EXPECT_THAT(text.out, HasSubstr("sum of ops ms"));
  EXPECT_THAT(text.out, HasSubstr("squeezenet1_1"));

  const json j = json::parse(run_nnergy({"dataset", "validate", "--db", db.string(), "--json"}).out,
                             nullptr, false);
  ASSERT_FALSE(j.is_discarded());
  ASSERT_EQ(j["networks"].size(), 1u) << j.dump(2);
  const json& row = j["networks"][0];
  EXPECT_EQ(row["mode"], "inference");
  EXPECT_EQ(row["unique_ops_measured"], 3);
  const double measured = row["measured_time_s"].get<double>();
  const double summed = row["summed_op_time_s"].get<double>();
  // Only the pooling layers are summed: a positive part of the network's time. The two are
  // timed seconds apart on a shared machine, so the bound leaves room for noise (the sum has
  // exceeded the network under a loaded test run); a sum over the wrong ops or with their
  // counts multiplied would still exceed it.
  EXPECT_GT(summed, 0);
  EXPECT_LT(summed, 3 * measured);
  EXPECT_NEAR(row["time_relative_difference"].get<double>(), (summed - measured) / measured, 1e-12);
  EXPECT_TRUE(row["measured_energy_j"].is_null() || row["measured_energy_j"].get<double>() > 0);
}

TEST(ProfileBadInput, ExitsTwo) {
  REQUIRE_PROFILE();
  const fs::path dir = fresh_dir("profile_bad");
  const std::string db = (dir / "x.sqlite").string();
  expect_bad_input(run_nnergy({"profile", "--models", "resnet5000", "--db", db}),
                   {"resnet5000", "resnet18"});
  expect_bad_input(run_nnergy({"profile", "--models", "alexnet", "--device", "tpu", "--db", db}),
                   {"--device 'tpu'", "cpu or cuda:N"});
  expect_bad_input(run_nnergy({"profile", "--models", "alexnet", "--dtype", "fp16", "--db", db}),
                   {"--dtype fp16", "CUDA only"});
  expect_bad_input(run_nnergy({"profile", "--models", "alexnet", "--tf32", "--db", db}),
                   {"--tf32", "--device cpu"});
  expect_bad_input(
      run_nnergy({"profile", "--models", "alexnet", "--clocks-mhz", "900", "--db", db}),
      {"--clocks-mhz 900", "cpu"});
  expect_bad_input(
      run_nnergy({"profile", "--models", "alexnet", "--modes", "sleeping", "--db", db}),
      {"--modes", "sleeping"});
  expect_bad_input(run_nnergy({"profile", "--models", "alexnet", "--shard", "3/2", "--db", db}),
                   {"--shard", "3/2"});
  expect_bad_input(run_nnergy({"profile", "--models", "alexnet", "--repeats", "0", "--db", db}),
                   {"--repeats 0"});
  expect_bad_input(run_nnergy({"profile", "--models", "alexnet"}), {"--db"});
  EXPECT_FALSE(fs::exists(db));
}

// A GPU campaign against the fake NVML: the GPU, its clocks and the LibTorch check are verified
// before anything is written or locked.
TEST(ProfileOnCuda, ChecksTheGpuItsClocksAndLibTorchBeforeWriting) {
  REQUIRE_PROFILE();
  const fs::path dir = fresh_dir("profile_cuda");
  const fs::path script = dir / "nvml.script";
  const fs::path log = dir / "nvml.log";
  {
    std::ofstream out(script);
    out << "gpus 1\nname 0 Fake H100\nuuid 0 GPU-fake-h100\nmemory_clocks 0 2619\n"
        << "graphics_clocks 0 2619 1980 1410 1200 900\nlog " << log.string() << "\n";
  }
  const std::vector<std::string> env = {"NNERGY_NVML_LIBRARY=" NNERGY_FAKE_NVML_PATH,
                                        "NNERGY_FAKE_NVML_SCRIPT=" + script.string()};
  const std::string db = (dir / "gpu.sqlite").string();
  auto profile = [&](std::vector<std::string> extra,
                     std::vector<std::string> environment) -> RunResult {
    std::vector<std::string> args = {"profile", "--models", "alexnet", "--whitelist",
                                     "MaxPool", "--db",     db};
    args.insert(args.end(), extra.begin(), extra.end());
    return run_nnergy(args, environment);
  };

  expect_bad_input(profile({"--device", "cuda:3"}, env), {"--device cuda:3", "NVML sees 1 GPU"});
  expect_bad_input(profile({"--device", "cuda:0", "--clocks-mhz", "1000"}, env),
                   {"--clocks-mhz", "1000 MHz", "Fake H100", "900, 1200, 1410"});
  expect_bad_input(profile({"--device", "cuda:0", "--clocks-mhz", "1410,fast"}, env),
                   {"--clocks-mhz 1410,fast", "'fast'"});
  // A scheduler's CUDA_VISIBLE_DEVICES picks the GPU: its N-th entry is cuda:N.
  auto with_visible = [&env](const std::string& value) {
    std::vector<std::string> e = env;
    e.push_back("CUDA_VISIBLE_DEVICES=" + value);
    return e;
  };
  expect_bad_input(profile({"--device", "cuda:1"}, with_visible("0")),
                   {"--device cuda:1", "CUDA_VISIBLE_DEVICES=0", "1 device(s)"});
  expect_bad_input(profile({"--device", "cuda:0"}, with_visible("GPU-other")),
                   {"CUDA_VISIBLE_DEVICES=GPU-other", "UUID"});
  expect_bad_input(profile({"--device", "cuda:0"}, with_visible("MIG-1234")), {"MIG-1234", "MIG"});
  const RunResult by_uuid =
      profile({"--device", "cuda:0", "--dry-run"}, with_visible("GPU-fake-h1"));
  EXPECT_EQ(by_uuid.exit_code, 0) << by_uuid;

  // The dry run needs only NVML: it names the clocks' plan without LibTorch touching CUDA.
  const RunResult dry =
      profile({"--device", "cuda:0", "--clocks-mhz", "1410,default", "--dry-run"}, env);
  ASSERT_EQ(dry.exit_code, 0) << dry;
  EXPECT_THAT(dry.out, HasSubstr("dry run"));
  EXPECT_THAT(dry.out, HasSubstr("x 1 s min time"));  // the GPU default
  EXPECT_THAT(dry.out, HasSubstr("1410 MHz"));
  EXPECT_THAT(dry.out, HasSubstr("default"));

  // Debian's LibTorch has no CUDA: a device error (exit 3), no file, no clock ever locked.
  const RunResult r = profile({"--device", "cuda:0", "--clocks-mhz", "1410"}, env);
  if (r.exit_code == 0) GTEST_SKIP() << "this LibTorch reaches a CUDA device: " << r.out;
  EXPECT_EQ(r.exit_code, 3) << r;
  EXPECT_THAT(r.err, HasSubstr("LibTorch sees 0 CUDA device(s)"));
  EXPECT_FALSE(fs::exists(db));
  EXPECT_THAT(read_file(log), Not(HasSubstr("lock_clocks")));

  // Without NVML there is no GPU to measure: also a device error.
  const RunResult no_nvml = profile(
      {"--device", "cuda:0"}, {"NNERGY_NVML_LIBRARY=" + (dir / "no-libnvidia-ml.so").string()});
  EXPECT_EQ(no_nvml.exit_code, 3) << no_nvml;
  EXPECT_THAT(no_nvml.err, HasSubstr("NVML is not available"));
  EXPECT_FALSE(fs::exists(db));
}

TEST(ProfileBadInput, LockedDatabaseIsNamedAndLeftIntact) {
  REQUIRE_PROFILE();
  const fs::path db = fresh_dir("profile_locked") / "cpu.sqlite";
  ASSERT_EQ(run_nnergy(tiny_profile(db)).exit_code, 0);
  // Another writer holds the file: this process keeps an exclusive transaction open while the
  // campaign runs, past the store's busy timeout (5 s).
  sqlite3* holder = nullptr;
  ASSERT_EQ(sqlite3_open(db.c_str(), &holder), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(holder, "BEGIN EXCLUSIVE", nullptr, nullptr, nullptr), SQLITE_OK);
  expect_bad_input(run_nnergy({"profile", "--models", "alexnet", "--whitelist", "Relu", "--db",
                               db.string(), "--min-time-s", "0.01", "--repeats", "1"}),
                   {db.string(), "locked"});
  sqlite3_exec(holder, "ROLLBACK", nullptr, nullptr, nullptr);
  sqlite3_close(holder);
  // Nothing lost: the first campaign's rows are all there.
  const RunResult exported = run_nnergy({"dataset", "export", "--db", db.string(), "--csv"});
  ASSERT_EQ(exported.exit_code, 0) << exported;
  EXPECT_EQ(csv_data_rows(exported.out), 6u) << exported;
}

TEST(ProfileBadInput, ReadOnlyDatabaseIsNamed) {
  REQUIRE_PROFILE();
  const fs::path db = fresh_dir("profile_read_only") / "cpu.sqlite";
  ASSERT_EQ(run_nnergy(tiny_profile(db)).exit_code, 0);
  auto more = [](const std::string& path) {
    return std::vector<std::string>{"profile", "--models",  "alexnet", "--whitelist",
                                    "Relu",    "--db",      path,      "--min-time-s",
                                    "0.01",    "--repeats", "1"};
  };
  // Opened read-only by URI (works for every user, root included).
  expect_bad_input(run_nnergy(more("file:" + db.string() + "?mode=ro")),
                   {db.string(), "read-only"});
  // A file without write permission; root writes regardless, so only checked for other users.
  if (geteuid() != 0) {
    fs::permissions(db, fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read);
    expect_bad_input(run_nnergy(more(db.string())), {db.string(), "read-only"});
    fs::permissions(db, fs::perms::owner_read | fs::perms::owner_write);
  }
  const RunResult exported = run_nnergy({"dataset", "export", "--db", db.string(), "--csv"});
  EXPECT_EQ(csv_data_rows(exported.out), 6u) << exported;
}

TEST(DatasetBadInput, MissingOtherSchemaAndNotADataset) {
  const fs::path dir = fresh_dir("dataset_bad");
  const std::string missing = (dir / "missing.sqlite").string();
  expect_bad_input(run_nnergy({"dataset", "export", "--db", missing, "--csv"}), {missing});
  expect_bad_input(run_nnergy({"dataset", "merge", (dir / "out.sqlite").string(), missing}),
                   {missing});
  const fs::path text = dir / "notes.sqlite";
  std::ofstream(text) << "not a database\n";
  expect_bad_input(run_nnergy({"dataset", "export", "--db", text.string(), "--csv"}),
                   {text.string()});

  expect_bad_input(run_nnergy({"dataset", "merge", (dir / "out.sqlite").string(), text.string()}),
                   {text.string()});

  // A dataset of a later schema version: PRAGMA user_version sits at byte 60 of the header.
  if (!profile_available()) return;
  const fs::path db = dir / "v99.sqlite";
  ASSERT_EQ(run_nnergy({"profile", "--models", "alexnet", "--whitelist", "MaxPool", "--db",
                        db.string(), "--min-time-s", "0.001", "--repeats", "1"})
                .exit_code,
            0);
  {
    std::fstream f(db, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(60);
    const char version[4] = {0, 0, 0, 99};
    f.write(version, 4);
  }
  expect_bad_input(run_nnergy({"dataset", "export", "--db", db.string(), "--csv"}),
                   {db.string(), "99"});
  expect_bad_input(run_nnergy({"dataset", "merge", (dir / "out.sqlite").string(), db.string()}),
                   {db.string(), "99"});
  expect_bad_input(run_nnergy({"profile", "--models", "alexnet", "--db", db.string()}),
                   {db.string(), "99"});
}

}  // namespace
