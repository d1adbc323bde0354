// End-to-end tests of `nnergy dataset import` and `nnergy dataset export --table published`.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "nnergy_runner.h"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using nnergy::cli_test::read_file;
using nnergy::cli_test::run_nnergy;
using nnergy::cli_test::RunResult;
using testing::HasSubstr;
using testing::StartsWith;

const fs::path kSmall = fs::path(NNERGY_TEST_FIXTURE_DIR) / "dataset" / "published_small.json";
const fs::path kCorpus = fs::path(NNERGY_TEST_DATA_DIR) / "calibration" / "measured_public.json";

fs::path fresh_dir(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("nnergy_import_cli_test_" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

void expect_bad_input(const RunResult& r, const std::vector<std::string>& mentions) {
  EXPECT_EQ(r.exit_code, 2) << r;
  EXPECT_EQ(r.out, "") << r;
  EXPECT_THAT(r.err, StartsWith("nnergy: error:")) << r;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << "not a single line:\n" << r;
  for (const std::string& m : mentions) EXPECT_THAT(r.err, HasSubstr(m)) << r;
}

TEST(DatasetImport, TextSummaryCountsAndNamesEveryRejection) {
  const fs::path dir = fresh_dir("text");
  const std::string db = (dir / "pub.sqlite").string();
  const RunResult r = run_nnergy({"dataset", "import", kSmall.string(), "--db", db});
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_EQ(r.err, "") << r;
  for (const char* line : {
           "records read: 12\n",
           "valid: 3\n",
           "imported: 3\n",
           "already present (same id, same content): 0\n",
           "conflicts (same id, other content; the stored record is kept): 0\n",
           "rejected: 9\n",
           "  pub0004: 'value' is missing (expected a number)\n",
           "  pub0005: 'unit' is missing (expected text)\n",
           "  pub0006: 'unit_si' is missing (expected text)\n",
           "  pub0007: 'value' is the string \"940 W\" (expected a number)\n",
           "  pub0008: grade 'D' is not one of: A, B, C\n",
           "  pub0009: 'measured' is false: only measured figures are accepted, not predictions\n",
           "  pub0001: duplicate id: record [0] has the same id and is the one considered\n",
           "  record [10]: 'id' is missing (expected text)\n",
           "  record [11]: the record is the number 42 (expected an object)\n",
       }) {
    EXPECT_THAT(r.out, HasSubstr(line)) << r;
  }
  EXPECT_THAT(r.out, HasSubstr("valid records per GPU:")) << r;
  EXPECT_THAT(r.out, HasSubstr("valid records per quantity:")) << r;
  EXPECT_THAT(r.out, HasSubstr("valid records per source:")) << r;
  // Two of the three valid records are on the A100, one on the GH200.
  std::istringstream lines(r.out);
  int a100_rows = 0;
  for (std::string line; std::getline(lines, line);) {
    if (line.find("NVIDIA A100-SXM4-40GB") != std::string::npos) {
      EXPECT_THAT(line, testing::MatchesRegex(" *2 +NVIDIA A100-SXM4-40GB *")) << line;
      ++a100_rows;
    }
  }
  EXPECT_EQ(a100_rows, 1) << r;

  const RunResult again = run_nnergy({"dataset", "import", kSmall.string(), "--db", db});
  ASSERT_EQ(again.exit_code, 0) << again;
  EXPECT_THAT(again.out, HasSubstr("imported: 0\n")) << again;
  EXPECT_THAT(again.out, HasSubstr("already present (same id, same content): 3\n")) << again;
}

TEST(DatasetImport, JsonSummaryHasContextCountsAndRejections) {
  const fs::path dir = fresh_dir("json");
  const std::string db = (dir / "pub.sqlite").string();
  const RunResult r = run_nnergy({"dataset", "import", kSmall.string(), "--db", db, "--json"});
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_EQ(r.err, "") << r;
  const json j = json::parse(r.out);
  const json& c = j.at("context");
  EXPECT_EQ(c.at("tool"), "nnergy");
  EXPECT_TRUE(c.at("tool_version").is_string());
  EXPECT_THAT(c.at("command_line").get<std::string>(), HasSubstr("dataset import"));
  EXPECT_EQ(c.at("input"), kSmall.string());
  EXPECT_EQ(c.at("database"), db);
  EXPECT_EQ(c.at("dataset_schema_version"), 3);
  EXPECT_EQ(j.at("records_read"), 12);
  EXPECT_EQ(j.at("records_valid"), 3);
  EXPECT_EQ(j.at("records_imported"), 3);
  EXPECT_EQ(j.at("records_already_present"), 0);
  EXPECT_EQ(j.at("records_conflicting"), 0);
  EXPECT_EQ(j.at("records_rejected"), 9);
  ASSERT_EQ(j.at("rejected").size(), 9u);
  EXPECT_EQ(j["rejected"][0].at("index"), 3);
  EXPECT_EQ(j["rejected"][0].at("id"), "pub0004");
  EXPECT_THAT(j["rejected"][0].at("reason").get<std::string>(), HasSubstr("'value' is missing"));
  EXPECT_TRUE(j["rejected"][7].at("id").is_null());
  EXPECT_EQ(j["rejected"][7].at("name"), "record [10]");
  EXPECT_EQ(j.at("valid_records_per_gpu"),
            json({{"NVIDIA A100-SXM4-40GB", 2}, {"NVIDIA GH200", 1}}));
  EXPECT_EQ(
      j.at("valid_records_per_quantity"),
      json({{"layer_forward_time", 1}, {"max_observed_power", 1}, {"time_per_iteration", 1}}));
}

TEST(DatasetImport, ChangedRecordIsAConflictNotAnOverwrite) {
  const fs::path dir = fresh_dir("conflict");
  const std::string db = (dir / "pub.sqlite").string();
  ASSERT_EQ(run_nnergy({"dataset", "import", kSmall.string(), "--db", db}).exit_code, 0);
  json records = json::parse(read_file(kSmall));
  records[1]["value"] = 0.5;
  const fs::path changed = dir / "changed.json";
  std::ofstream(changed) << records.dump(1);
  const RunResult r = run_nnergy({"dataset", "import", changed.string(), "--db", db});
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_THAT(r.out, HasSubstr("conflicts (same id, other content; the stored record is kept): 1\n"
                               "  pub0002: differs in value\n"))
      << r;
  EXPECT_THAT(r.out, HasSubstr("already present (same id, same content): 2\n")) << r;
  const RunResult csv =
      run_nnergy({"dataset", "export", "--db", db, "--csv", "--table", "published"});
  EXPECT_THAT(csv.out, HasSubstr(",layer_forward_time,0.25,ms,")) << "the stored value is kept";
}

TEST(DatasetImport, ExportPublishedTableAsCsv) {
  const fs::path dir = fresh_dir("export");
  const std::string db = (dir / "pub.sqlite").string();
  ASSERT_EQ(run_nnergy({"dataset", "import", kSmall.string(), "--db", db}).exit_code, 0);
  const RunResult r =
      run_nnergy({"dataset", "export", "--db", db, "--csv", "--table", "published"});
  ASSERT_EQ(r.exit_code, 0) << r;
  std::istringstream lines(r.out);
  std::vector<std::string> data;
  std::string header;
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("#", 0) == 0) continue;
    if (header.empty()) {
      header = line;
    } else {
      data.push_back(line);
    }
  }
  EXPECT_THAT(r.out, HasSubstr("# row_count: 3\n"));
  EXPECT_THAT(r.out, HasSubstr("# command_line: nnergy dataset export"));
  EXPECT_THAT(header, StartsWith("id,source,location,gpu,network,mode,batch,"));
  ASSERT_EQ(data.size(), 3u) << r;
  EXPECT_THAT(data[0], StartsWith("pub0001,"));

  const fs::path out = dir / "published.csv";
  const RunResult to_file = run_nnergy(
      {"dataset", "export", "--db", db, "--csv", "--table", "published", "-o", out.string()});
  EXPECT_EQ(to_file.out, "wrote 3 published measurement rows to " + out.string() + "\n");
  const auto without_date = [](const std::string& text) {
    std::istringstream in(text);
    std::string kept;
    for (std::string line; std::getline(in, line);) {
      if (line.rfind("# date_utc:", 0) != 0 && line.rfind("# command_line:", 0) != 0) {
        kept += line + "\n";
      }
    }
    return kept;
  };
  EXPECT_EQ(without_date(read_file(out)), without_date(r.out));
  // The op-measurement table of the same file is empty but well formed.
  const RunResult ops = run_nnergy({"dataset", "export", "--db", db, "--csv"});
  EXPECT_EQ(ops.exit_code, 0) << ops;
  EXPECT_THAT(ops.out, HasSubstr("# row_count: 0\n"));
}

TEST(DatasetImport, UnreadableFilesAndBadFlagsExitWith2) {
  const fs::path dir = fresh_dir("bad");
  const std::string db = (dir / "pub.sqlite").string();
  const std::string missing = (dir / "missing.json").string();
  expect_bad_input(run_nnergy({"dataset", "import", missing, "--db", db}), {missing});
  EXPECT_FALSE(fs::exists(db)) << "a failed import creates no dataset";

  const fs::path not_json = dir / "notes.json";
  std::ofstream(not_json) << "[\n  {\"id\": \"r1\",}\n]\n";
  expect_bad_input(run_nnergy({"dataset", "import", not_json.string(), "--db", db}),
                   {not_json.string(), "line 2", "not valid JSON"});
  EXPECT_FALSE(fs::exists(db));

  const fs::path object = dir / "object.json";
  std::ofstream(object) << R"({"id": "r1"})";
  expect_bad_input(run_nnergy({"dataset", "import", object.string(), "--db", db}),
                   {object.string(), "expected a JSON list"});

  expect_bad_input(run_nnergy({"dataset", "import", kSmall.string()}), {"--db"});
  ASSERT_EQ(run_nnergy({"dataset", "import", kSmall.string(), "--db", db}).exit_code, 0);
  expect_bad_input(run_nnergy({"dataset", "export", "--db", db, "--csv", "--table", "ops"}),
                   {"--table", "ops"});
}

// The calibration corpus shipped in data/: every record is read; the reader's own known-answer
// test counts the valid ones independently.
TEST(DatasetImport, FullCalibrationCorpus) {
  const fs::path dir = fresh_dir("corpus");
  const std::string db = (dir / "corpus.sqlite").string();
  const RunResult r = run_nnergy({"dataset", "import", kCorpus.string(), "--db", db, "--json"});
  ASSERT_EQ(r.exit_code, 0) << r;
  const json j = json::parse(r.out);
  EXPECT_EQ(j.at("records_read"), 918);
  EXPECT_EQ(j.at("records_imported"), j.at("records_valid"));
  EXPECT_EQ(j.at("records_valid").get<int>() + j.at("records_rejected").get<int>(), 918);
  const RunResult text = run_nnergy({"dataset", "import", kCorpus.string(), "--db", db});
  ASSERT_EQ(text.exit_code, 0) << text;
  EXPECT_THAT(text.out, HasSubstr("imported: 0\n")) << text;
  std::cout << text.out;
}

}  // namespace
