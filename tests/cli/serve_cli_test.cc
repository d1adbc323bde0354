// End-to-end tests of `nnergy serve`: its refusals (exit 2, one line on stderr, nothing on
// stdout), the JSON keys tools read, CSV and HTML, and `predict` of a decode-step export.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "nnergy_runner.h"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using nnergy::cli_test::read_file;
using nnergy::cli_test::run_json;
using nnergy::cli_test::run_nnergy;
using nnergy::cli_test::RunResult;
using testing::HasSubstr;

const std::string kLlama8b = "meta-llama/Llama-3.1-8B-Instruct";

std::vector<std::string> serve_args(std::vector<std::string> extra,
                                    const std::string& device = "h100") {
  std::vector<std::string> args = {"serve",          kLlama8b, "--device",        device,
                                   "--input-tokens", "1000",   "--output-tokens", "200"};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

fs::path scratch(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / "nnergy_serve_cli_test";
  fs::create_directories(dir);
  return dir / name;
}

fs::path write_config(const std::string& name, const json& config) {
  const fs::path path = scratch(name);
  std::ofstream(path) << config.dump(1);
  return path;
}

// A refusal: exit code 2, nothing on stdout, one line on stderr holding every `expected`.
void expect_refusal(const std::vector<std::string>& args,
                    const std::vector<std::string>& expected) {
  const RunResult r = run_nnergy(args);
  EXPECT_EQ(r.exit_code, 2) << r;
  EXPECT_EQ(r.out, "") << r;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r;
  for (const std::string& e : expected) EXPECT_THAT(r.err, HasSubstr(e)) << r;
}

TEST(ServeCli, RefusesAnUnknownModelWithTheNearestNames) {
  expect_refusal(
      {"serve", "llama-3.1-8x", "--device", "h100", "--input-tokens", "100", "--output-tokens",
       "10"},
      {"MODEL", "'llama-3.1-8x'", "did you mean", kLlama8b, "--list-models", "config.json"});
}

TEST(ServeCli, RefusesAConfigOfAnUnsupportedModelTypeNamingTheSupportedOnes) {
  const fs::path bert = write_config("bert.json", {{"model_type", "bert"}, {"hidden_size", 768}});
  expect_refusal({"serve", bert.string(), "--input-tokens", "100", "--output-tokens", "10"},
                 {bert.string(), "model_type 'bert'", "supported", "llama", "qwen3_moe"});
}

TEST(ServeCli, RefusesAConfigThatLacksAField) {
  const fs::path config =
      write_config("no_vocab.json",
                   {{"model_type", "llama"}, {"hidden_size", 4096}, {"num_attention_heads", 32}});
  expect_refusal({"serve", config.string(), "--input-tokens", "100", "--output-tokens", "10"},
                 {config.string(), "'vocab_size'", "expected a positive integer"});
}

TEST(ServeCli, AModelDirectoryIsReadThroughItsConfigJson) {
  // As transformers takes a checkpoint directory: its config.json.
  const fs::path dir = scratch("tiny-llama");
  fs::create_directories(dir);
  std::ofstream(dir / "config.json")
      << json{{"model_type", "llama"},     {"hidden_size", 512},
              {"intermediate_size", 1024}, {"num_hidden_layers", 4},
              {"num_attention_heads", 8},  {"num_key_value_heads", 8},
              {"vocab_size", 1000},        {"max_position_embeddings", 4096}}
             .dump();
  const RunResult r = run_nnergy({"serve", dir.string(), "--device", "h100", "--input-tokens",
                                  "100", "--output-tokens", "10"});
  EXPECT_EQ(r.exit_code, 0) << r;
  EXPECT_THAT(r.out, HasSubstr("nnergy serve: " + (dir / "config.json").string())) << r;
  const fs::path empty = scratch("no-config");
  fs::create_directories(empty);
  expect_refusal({"serve", empty.string(), "--input-tokens", "100", "--output-tokens", "10"},
                 {empty.string(), "a directory without a config.json"});
}

TEST(ServeCli, RefusesAConfigThatIsNotJson) {
  const fs::path path = scratch("broken.json");
  std::ofstream(path) << "{\"model_type\": \"llama\",\n  \"hidden_size\": }";
  expect_refusal({"serve", path.string(), "--input-tokens", "100", "--output-tokens", "10"},
                 {path.string(), "not valid JSON", "line 2"});
}

TEST(ServeCli, RefusesAPrecisionTheGpuCanNeitherComputeNorRunWeightOnly) {
  expect_refusal(serve_args({"--precision", "fp8"}, "v100"),
                 {"--precision", "v100", "fp8", "weight-only", "h100-sxm"});
  // A GPU without bf16 units is told to use the same weights in fp16.
  expect_refusal(serve_args({"--precision", "bf16"}, "t4"), {"--precision fp16"});
}

TEST(ServeCli, RefusesATensorParallelSizeThatDoesNotDivideTheHeads) {
  expect_refusal(serve_args({"--tp", "3", "--gpus", "3"}),
                 {"--tp 3", "32 attention heads", "1, 2, 4, 8"});
}

TEST(ServeCli, RefusesGpusThatAreNotAMultipleOfTpTimesPp) {
  expect_refusal(serve_args({"--tp", "2", "--gpus", "3"}), {"--gpus 3", "multiple", "2"});
}

TEST(ServeCli, RefusesAModelThatDoesNotFitAndNamesTheSmallestTpThatWould) {
  expect_refusal({"serve", "meta-llama/Llama-3.1-70B-Instruct", "--device", "h100", "--tp", "1",
                  "--input-tokens", "1000", "--output-tokens", "200"},
                 {"--tp 1", "GiB of weights", "--tp 2 would fit"});
}

TEST(ServeCli, RefusesABatchThatDoesNotFitAndNamesTheLargestThatDoes) {
  expect_refusal(serve_args({"--max-batch", "100000"}), {"--max-batch 100000", "fit"});
  expect_refusal(serve_args({"--workload", "offline", "--batch", "100000"}),
                 {"--batch 100000", "fit"});
}

TEST(ServeCli, RefusesTokenCountsThatAreNotPositiveOrBeyondTheContext) {
  expect_refusal({"serve", kLlama8b, "--input-tokens", "0", "--output-tokens", "10"},
                 {"--input-tokens 0", "at least 1"});
  expect_refusal({"serve", kLlama8b, "--input-tokens", "10", "--output-tokens", "-3"},
                 {"--output-tokens -3", "at least 1"});
  expect_refusal({"serve", kLlama8b, "--input-tokens", "200000", "--output-tokens", "10"},
                 {"200010 tokens", "context of 131072"});
  expect_refusal({"serve", kLlama8b, "--device", "h100"}, {"--input-tokens", "--output-tokens"});
}

TEST(ServeCli, RefusesAnUnknownDeviceOrEngine) {
  expect_refusal(serve_args({}, "h1000"), {"--device", "h1000", "did you mean"});
  expect_refusal(serve_args({"--engine", "vllm-9"}), {"--engine", "vllm"});
}

// Tools read these keys; each is a positive number and they agree with each other.
TEST(ServeCli, JsonHoldsTheTotalsToolsRead) {
  const json j = run_json(serve_args({"--json"}));
  ASSERT_FALSE(j.is_null());
  const json& t = j.at("totals");
  for (const char* key :
       {"energy_per_output_token_j", "output_tokens_per_s", "time_per_output_token_s", "ttft_s",
        "energy_per_request_j", "avg_power_w"}) {
    ASSERT_TRUE(t.contains(key)) << key;
    EXPECT_GT(t.at(key).get<double>(), 0) << key;
  }
  // Energy per token is power over throughput (all GPUs), and per request 200 tokens' worth.
  const double per_token = t.at("energy_per_output_token_j");
  EXPECT_NEAR(per_token,
              t.at("avg_power_w").get<double>() / t.at("output_tokens_per_s").get<double>(),
              1e-6 * per_token);
  EXPECT_NEAR(t.at("energy_per_request_j").get<double>(), 200 * per_token, 1e-6 * 200 * per_token);
  EXPECT_EQ(j.at("deployment").at("device"), "h100-sxm");
  EXPECT_EQ(j.at("context").at("model"), kLlama8b);
}

TEST(ServeCli, CsvHasOneRowPerSweepPoint) {
  const RunResult r = run_nnergy(serve_args({"--sweep-batch", "1,8,64", "--csv"}));
  ASSERT_EQ(r.exit_code, 0) << r;
  std::vector<std::string> rows;
  std::string line;
  std::istringstream in(r.out);
  while (std::getline(in, line))
    if (!line.empty() && line[0] != '#') rows.push_back(line);
  ASSERT_EQ(rows.size(), 4u) << r.out;  // header + 3 batches
  EXPECT_THAT(rows[0], HasSubstr("energy_per_output_token_j"));
  EXPECT_EQ(rows[1].substr(0, 2), "1,");
  EXPECT_EQ(rows[1].substr(rows[1].size() - 6), ",batch");
}

TEST(ServeCli, CsvKeepsTheBatchSweepBesideTheClockSweep) {
  // --sweep-batch with --sweep-clocks wrote only the clock sweep before.
  const RunResult r =
      run_nnergy(serve_args({"--sweep-batch", "1,8,64", "--sweep-clocks", "--csv"}));
  ASSERT_EQ(r.exit_code, 0) << r;
  int batch_rows = 0, clock_rows = 0;
  std::string line;
  std::istringstream in(r.out);
  while (std::getline(in, line)) {
    if (line.size() > 6 && line.substr(line.size() - 6) == ",batch") ++batch_rows;
    if (line.size() > 6 && line.substr(line.size() - 6) == ",clock") ++clock_rows;
  }
  EXPECT_EQ(batch_rows, 3) << r.out;
  EXPECT_GT(clock_rows, 3) << r.out;
}

TEST(ServeCli, WritesAnHtmlReport) {
  const fs::path html = scratch("serve.html");
  fs::remove(html);
  const RunResult r = run_nnergy(serve_args({"--sweep-batch", "1,8,64", "--html", html.string()}));
  ASSERT_EQ(r.exit_code, 0) << r;
  const std::string page = read_file(html);
  EXPECT_THAT(page, HasSubstr("<html"));
  EXPECT_THAT(page, HasSubstr(kLlama8b));
}

TEST(ServeCli, SaysWhichDeviceItAssumedWhenNoneIsNamed) {
  const RunResult r =
      run_nnergy({"serve", kLlama8b, "--input-tokens", "1000", "--output-tokens", "200"});
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_THAT(r.out, HasSubstr("the default (--device to choose another)"));
}

TEST(ServeCli, ListsAtLeastFortyModels) {
  const json j = run_json({"serve", "--list-models", "--json"});
  ASSERT_TRUE(j.contains("models")) << j.dump();
  EXPECT_GE(j.at("models").size(), 40u);
}

// A decode step exported with past key/values (the cache grown by Concat, present_key's axis
// named like the past's) goes through predict with the past length bound by --dim; a longer
// past reads and multiplies more cache.
TEST(ServeCli, DecodeStepExportsWithPastKeyValuesKeepWorkingThroughPredict) {
  const std::string file =
      std::string(NNERGY_TEST_FIXTURE_DIR) + "/user_exports_modern/llama_decode_step_past_kv.onnx";
  const json short_past = run_json(
      {"predict", file, "--device", "h100", "--batch", "8", "--dim", "past=512", "--json"});
  const json long_past = run_json(
      {"predict", file, "--device", "h100", "--batch", "8", "--dim", "past=4096", "--json"});
  ASSERT_FALSE(short_past.is_null() || long_past.is_null());
  const json& a = short_past["totals"];
  const json& b = long_past["totals"];
  // Each extra cached token's keys and values (2 KV heads × 64 each, fp32) per sample are at
  // least read and written by the Concat that grows the cache (the eager graph then copies
  // them again: repeat_kv's Expand, the MatMuls).
  const double cache_bytes = 8.0 * (4096 - 512) * 2 * 2 * 64 * 4;
  EXPECT_GE(b["byte_count"].get<double>() - a["byte_count"].get<double>(), 2 * cache_bytes);
  EXPECT_GT(b["flop_count"].get<double>(), a["flop_count"].get<double>());
}

// compare --serve ranks deployments by energy per output token; each row is what serve says
// for that device and GPU count, with cost and emissions from the given price and grid.
TEST(CompareServeCli, RanksDeploymentsAsServePredictsThem) {
  const json j =
      run_json({"compare", kLlama8b, "--serve", "--devices", "h100,l40s", "--gpus", "1,2",
                "--input-tokens", "1000", "--output-tokens", "200", "--price-per-gpu-hour",
                "h100=2.5,l40s=1", "--grid-gco2e-per-kwh", "400", "--json"});
  ASSERT_FALSE(j.is_null());
  ASSERT_EQ(j.at("rows").size(), 4u) << j.dump(1);
  double previous = 0;
  for (std::size_t i = 0; i < 4; ++i) {
    const json& row = j["rows"][i];
    ASSERT_TRUE(row.at("runs").get<bool>()) << row.dump();
    EXPECT_EQ(row.at("rank"), static_cast<int>(i) + 1);
    const double per_token = row.at("energy_per_output_token_j");
    EXPECT_GE(per_token, previous);
    previous = per_token;
    const json one = run_json({"serve", kLlama8b, "--device", row.at("device"), "--tp",
                               std::to_string(row.at("gpus").get<int>()), "--input-tokens", "1000",
                               "--output-tokens", "200", "--json"});
    EXPECT_NEAR(one["totals"]["energy_per_output_token_j"].get<double>(), per_token,
                1e-12 * per_token);
    const double price = row.at("device") == "h100-sxm" ? 2.5 : 1.0;
    const double tokens_per_hour = row.at("output_tokens_per_s").get<double>() * 3600;
    EXPECT_NEAR(row.at("usd_per_million_tokens").get<double>(),
                price * row.at("gpus").get<int>() / tokens_per_hour * 1e6, 1e-9);
    EXPECT_NEAR(row.at("gco2e_per_million_tokens").get<double>(), per_token * 1e6 / 3.6e6 * 400,
                1e-9);
  }
}

TEST(CompareServeCli, ALatencyTargetTakesTheLargestBatchThatMeetsIt) {
  const json j = run_json({"compare", "meta-llama/Llama-3.1-70B-Instruct", "--serve", "--devices",
                           "h100,a100-80gb", "--gpus", "1,4,8", "--input-tokens", "1000",
                           "--output-tokens", "200", "--max-itl-ms", "40", "--json"});
  ASSERT_FALSE(j.is_null());
  int ranked = 0;
  for (const json& row : j.at("rows")) {
    if (row.at("gpus") == 1) {
      EXPECT_FALSE(row.at("runs").get<bool>()) << row.dump();  // 70B in bf16 fits no one GPU
      EXPECT_THAT(row.at("reason").get<std::string>(), HasSubstr("GiB of weights"));
      continue;
    }
    if (!row.at("meets_target").get<bool>()) continue;
    ++ranked;
    EXPECT_LE(row.at("time_per_output_token_s").get<double>(), 0.040) << row.dump();
    EXPECT_LT(row.at("batch").get<double>(), 1024) << row.dump();
  }
  EXPECT_GE(ranked, 2);
}

TEST(CompareServeCli, RefusesNetworkSettingsAndServeSettingsWithoutServe) {
  expect_refusal({"compare", kLlama8b, "--serve", "--batch", "8", "--input-tokens", "10",
                  "--output-tokens", "10"},
                 {"--serve", "--batch", "--input-tokens"});
  expect_refusal({"compare", "resnet50", "--input-tokens", "10"}, {"add --serve"});
  expect_refusal({"compare", kLlama8b, "--serve", "--input-tokens", "10", "--output-tokens", "10",
                  "--price-per-gpu-hour", "h100=cheap"},
                 {"--price-per-gpu-hour", "'h100=cheap'"});
  expect_refusal({"compare", kLlama8b, "--serve", "--input-tokens", "10", "--output-tokens", "10",
                  "--max-itl-ms", "0"},
                 {"--max-itl-ms", "positive"});
  expect_refusal(
      {"compare", "llama-3.1-8x", "--serve", "--input-tokens", "10", "--output-tokens", "10"},
      {"did you mean"});
  // Token counts beyond the context are the same refusal on every GPU: said once.
  expect_refusal({"compare", kLlama8b, "--serve", "--input-tokens", "200000", "--output-tokens",
                  "10", "--devices", "h100,b200"},
                 {"context of 131072"});
}

}  // namespace
