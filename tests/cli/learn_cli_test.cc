// End-to-end tests of `nnergy train`, `nnergy evaluate` and `nnergy predict --predictor FILE` on
// the committed CPU dataset: exit codes, stdout and stderr as a user sees them.
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::HasSubstr;

const fs::path kDataDir = NNERGY_TEST_DATA_DIR;
const fs::path kDataset = kDataDir / "datasets" / "cpu.sqlite";

struct RunResult {
  int exit_code = -1;  ///< the process's exit status; -1 when it did not exit normally
  std::string out;
  std::string err;
};

std::ostream& operator<<(std::ostream& os, const RunResult& r) {
  return os << "exit " << r.exit_code << "\n--- stdout ---\n"
            << r.out.substr(0, 3000) << "\n--- stderr ---\n"
            << r.err.substr(0, 3000);
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// A scratch directory for the whole binary, removed at exit.
const fs::path& scratch() {
  static const fs::path dir = [] {
    fs::path d = fs::temp_directory_path() / ("nnergy_learn_cli_" + std::to_string(::getpid()));
    fs::remove_all(d);
    fs::create_directories(d);
    return d;
  }();
  return dir;
}

class ScratchCleanup : public testing::Environment {
 public:
  void TearDown() override { fs::remove_all(scratch()); }
};
const testing::Environment* const kCleanup = testing::AddGlobalTestEnvironment(new ScratchCleanup);

// Runs the binary with `args` (no shell); stdout and stderr go to files in the scratch
// directory. The data directory is pinned to the source tree and the user catalog to a path
// that does not exist, so that a developer's own catalog cannot change the results.
RunResult run_nnergy(const std::vector<std::string>& args) {
  static int runs = 0;
  const std::string tag = std::to_string(++runs);
  const fs::path out_path = scratch() / ("stdout_" + tag);
  const fs::path err_path = scratch() / ("stderr_" + tag);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out_path.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err_path.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  std::vector<std::string> argv_strings{NNERGY_BINARY};
  argv_strings.insert(argv_strings.end(), args.begin(), args.end());
  std::vector<std::string> env_strings;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry = *e;
    if (entry.rfind("NNERGY_DATA_DIR=", 0) != 0 && entry.rfind("NNERGY_USER_DEVICES=", 0) != 0) {
      env_strings.push_back(entry);
    }
  }
  env_strings.push_back("NNERGY_DATA_DIR=" + kDataDir.string());
  env_strings.push_back("NNERGY_USER_DEVICES=" + (scratch() / "no-such-dir" / "d.json").string());
  std::vector<char*> argv;
  for (std::string& s : argv_strings) argv.push_back(s.data());
  argv.push_back(nullptr);
  std::vector<char*> envp;
  for (std::string& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);

  RunResult result;
  pid_t pid = 0;
  const int spawn_error =
      posix_spawn(&pid, NNERGY_BINARY, &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  if (spawn_error != 0) {
    result.err = std::string("posix_spawn: ") + std::strerror(spawn_error);
    return result;
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  result.out = read_file(out_path);
  result.err = read_file(err_path);
  return result;
}

// One forest model of the CPU dataset, trained once for the whole binary.
const fs::path& trained_model() {
  static const fs::path model = [] {
    const fs::path path = scratch() / "cpu-forest.nnp";
    const RunResult r = run_nnergy({"train", "--db", kDataset.string(), "--predictor", "forest",
                                    "--out", path.string(), "--threads", "1"});
    EXPECT_EQ(r.exit_code, 0) << r;
    EXPECT_THAT(r.out, HasSubstr("power_w: not trained")) << r;
    EXPECT_THAT(r.out, HasSubstr("cpu-core")) << r;
    return path;
  }();
  return model;
}

// The trained model with its JSON changed by `edit`, written next to it as `name`.
fs::path edited_model(const std::string& name, const std::function<void(json&)>& edit) {
  json j = json::parse(read_file(trained_model()));
  edit(j);
  const fs::path path = scratch() / name;
  std::ofstream(path) << j.dump();
  return path;
}

void expect_bad_input(const RunResult& r, const std::vector<std::string>& mentions) {
  EXPECT_EQ(r.exit_code, 2) << r;
  EXPECT_EQ(r.out, "") << "a failing run prints nothing on stdout";
  EXPECT_THAT(r.err, testing::StartsWith("nnergy: error: ")) << r;
  for (const std::string& m : mentions) EXPECT_THAT(r.err, HasSubstr(m)) << r;
}

TEST(LearnCli, TrainWritesAModelThatPredictSaysItUses) {
  const RunResult r = run_nnergy({"predict", "resnet50", "--predictor", trained_model().string(),
                                  "--mode", "training", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r;
  const json j = json::parse(r.out);
  EXPECT_EQ(j["context"]["device"]["id"], "cpu-core") << "the model's device is the default";
  EXPECT_EQ(j["context"]["predictor"], "forest (time) + analytical (power)");
  EXPECT_THAT(j["models"]["time"].get<std::string>(), HasSubstr("forest from"));
  EXPECT_THAT(j["models"]["power"].get<std::string>(), HasSubstr("analytical"));
  const double time_s = j["totals"]["time_s"].get<double>();
  EXPECT_GT(time_s, 0);
  EXPECT_GT(j["totals"]["time_std_s"].get<double>(), 0) << "the forest gives an uncertainty";
  EXPECT_GT(j["totals"]["edp_std_j_s"].get<double>(), 0);
  for (const json& layer : j["layers"]) {
    if (layer["index"].is_null()) continue;  // the optimizer step is analytical
    EXPECT_NEAR(layer["energy_j"].get<double>(),
                layer["time_s"].get<double>() * layer["power_w"].get<double>(),
                1e-9 * layer["energy_j"].get<double>());
  }
}

TEST(LearnCli, SweepWithAModelSaysWhichModelAndHowSureTheOptimumIs) {
  const RunResult r = run_nnergy(
      {"predict", "resnet18", "--predictor", trained_model().string(), "--sweep-clocks"});
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_THAT(r.out, HasSubstr("predictor: forest (time) + analytical (power)"));
  EXPECT_THAT(r.out, HasSubstr("time: forest from"));
  EXPECT_THAT(r.out, HasSubstr("power: analytical"));
  EXPECT_THAT(r.out, HasSubstr(" ± "));
  EXPECT_THAT(r.out, HasSubstr("σ energy J"));
  EXPECT_THAT(r.out, HasSubstr("energy optimum: "));
  // The CPU dataset is measured at the default clock only: the report says the trees cannot
  // follow the clock.
  EXPECT_THAT(r.out, HasSubstr("saw clocks"));
}

TEST(LearnCli, EvaluatePrintsTheTablesAndWritesBothCsvFiles) {
  const fs::path scatter = scratch() / "scatter.csv";
  const fs::path features = scratch() / "features.csv";
  const RunResult r =
      run_nnergy({"evaluate", "--db", kDataset.string(), "--predictor", "analytical", "--folds",
                  "3", "--holdout-networks", "resnet18", "--scatter-csv", scatter.string(),
                  "--features-csv", features.string()});
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_THAT(r.out, HasSubstr("CV mean R² ± σ (3-fold) time"));
  EXPECT_THAT(r.out, HasSubstr("test RMSPE %"));
  EXPECT_THAT(r.out, HasSubstr("no power measurements"));
  EXPECT_THAT(r.out, HasSubstr("Held-out networks resnet18"));
  EXPECT_THAT(r.out, HasSubstr("network-level time MAPE"));
  EXPECT_THAT(r.out, HasSubstr("All predictors side by side"));
  const std::string scatter_text = read_file(scatter);
  EXPECT_THAT(scatter_text, HasSubstr("# command_line: nnergy evaluate"));
  EXPECT_THAT(scatter_text, HasSubstr("predictor,target,split,fold,signature,op_type,mode"));
  EXPECT_THAT(scatter_text, HasSubstr("analytical,time_s,holdout,"));
  const std::string features_text = read_file(features);
  EXPECT_THAT(features_text, HasSubstr("row,signature,op_type,mode,clock_mhz,dtype,split,fold"));
  EXPECT_THAT(features_text, HasSubstr(",flop_count"));
}

TEST(LearnCli, SetGivesTheRegressorItsSettingsAndTheModelKeepsThem) {
  const fs::path path = scratch() / "small-forest.nnp";
  const RunResult r =
      run_nnergy({"train", "--db", kDataset.string(), "--predictor", "forest", "--out",
                  path.string(), "--set", "num_parallel_tree=7", "--set", "max_depth=4"});
  ASSERT_EQ(r.exit_code, 0) << r;
  const json model = json::parse(read_file(path));
  const json& settings = model["targets"]["time_s"]["model"]["settings"];
  EXPECT_EQ(settings["num_parallel_tree"], 7);
  EXPECT_EQ(settings["max_depth"], 4);
}

TEST(LearnCliBadInput, SetWithAnUnknownKeyOrNoValue) {
  const fs::path out = scratch() / "never-set.nnp";
  expect_bad_input(run_nnergy({"train", "--db", kDataset.string(), "--out", out.string(), "--set",
                               "max_dept=4"}),
                   {"max_dept"});
  expect_bad_input(run_nnergy({"evaluate", "--db", kDataset.string(), "--predictor", "forest",
                               "--set", "max_depth"}),
                   {"--set 'max_depth'", "KEY=VALUE"});
  EXPECT_FALSE(fs::exists(out));
}

TEST(LearnCliBadInput, TooFewRowsForTheFolds) {
  expect_bad_input(run_nnergy({"evaluate", "--db", kDataset.string(), "--predictor", "analytical",
                               "--folds", "100000"}),
                   {"--folds 100000", "unique ops"});
}

TEST(LearnCliBadInput, UnknownPredictor) {
  expect_bad_input(
      run_nnergy({"evaluate", "--db", kDataset.string(), "--predictor", "forest,no-such-model"}),
      {"--predictor no-such-model", "forest"});
  const fs::path out = scratch() / "never.nnp";
  expect_bad_input(run_nnergy({"train", "--db", kDataset.string(), "--predictor", "nope", "--out",
                               out.string()}),
                   {"--predictor nope"});
  EXPECT_FALSE(fs::exists(out));
  expect_bad_input(run_nnergy({"predict", "resnet50", "--predictor", "no-such-file.nnp"}),
                   {"--predictor no-such-file.nnp"});
}

TEST(LearnCliBadInput, CorruptModelFile) {
  const fs::path corrupt = scratch() / "corrupt.nnp";
  const std::string text = read_file(trained_model());
  std::ofstream(corrupt) << text.substr(0, text.size() / 3);
  expect_bad_input(run_nnergy({"predict", "resnet50", "--predictor", corrupt.string()}),
                   {corrupt.string(), "not valid JSON"});
}

TEST(LearnCliBadInput, ModelOfAnotherSchemaOrFormatVersion) {
  const fs::path version = edited_model("version.nnp", [](json& j) { j["format_version"] = 99; });
  expect_bad_input(run_nnergy({"predict", "resnet50", "--predictor", version.string()}),
                   {version.string(), "format_version 99"});
  const fs::path schema = edited_model("schema.nnp", [](json& j) {
    j["targets"]["time_s"]["feature_names"][2] = "some_other_feature";
  });
  expect_bad_input(run_nnergy({"predict", "resnet50", "--predictor", schema.string()}),
                   {schema.string(), "feature schema", "'some_other_feature'"});
}

TEST(LearnCliBadInput, HeldOutNetworkNotInTheDataset) {
  expect_bad_input(run_nnergy({"evaluate", "--db", kDataset.string(), "--predictor", "analytical",
                               "--folds", "3", "--holdout-networks", "resnet50,no_such_net"}),
                   {"--holdout-networks", "'no_such_net'", "resnet50"});
}

TEST(LearnCliBadInput, OutputInAMissingDirectoryWritesNothing) {
  const fs::path missing = scratch() / "no-such-dir";
  expect_bad_input(run_nnergy({"train", "--db", kDataset.string(), "--predictor", "forest", "--out",
                               (missing / "m.nnp").string()}),
                   {"--out", "no-such-dir", "does not exist"});
  expect_bad_input(run_nnergy({"evaluate", "--db", kDataset.string(), "--predictor", "analytical",
                               "--folds", "3", "--scatter-csv", (missing / "s.csv").string()}),
                   {"--scatter-csv", "no-such-dir"});
  EXPECT_FALSE(fs::exists(missing));
}

}  // namespace
