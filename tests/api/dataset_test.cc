// api::import_published, merge_datasets, export_dataset and validate_dataset.
#include "nnergy/api/dataset.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "invalid_input_message.h"
#include "nnergy/core/error.h"
#include "temp_dir_test.h"

namespace nnergy::api {
namespace {

using testing::HasSubstr;
using testing::StartsWith;

const std::filesystem::path kCpuDataset =
    std::filesystem::path(NNERGY_TEST_DATA_DIR) / "datasets" / "cpu.sqlite";
const std::filesystem::path kPublishedSmall =
    std::filesystem::path(NNERGY_TEST_FIXTURE_DIR) / "dataset" / "published_small.json";

class ApiDataset : public test_support::TempDirTest {};

using test_support::invalid_input_message;

TEST(ApiDatasetValidate, TheCommittedDatasetAgainstItself) {
  DatasetValidateRequest r;
  r.db = kCpuDataset;
  r.command_line = "api_test";
  const report::DatasetValidationReport report = validate_dataset(r);
  ASSERT_FALSE(report.networks.empty());
  const auto it = std::find_if(report.networks.begin(), report.networks.end(), [](const auto& v) {
    return v.network == "resnet50" && v.mode == "inference";
  });
  ASSERT_NE(it, report.networks.end());
  // README: 128.05 ms measured, 120.62 ms summed (−5.8 %), 54 of 55 ops, one node not measured.
  EXPECT_NEAR(1e3 * it->measured_time_s, 128.05, 0.005);
  EXPECT_NEAR(1e3 * it->summed_time_s, 120.62, 0.005);
  EXPECT_EQ(it->ops_measured, 54);
  EXPECT_EQ(it->unique_ops, 55);
  EXPECT_EQ(it->nodes_not_measured, 1);
  const nlohmann::ordered_json j = report::to_json(report);
  EXPECT_EQ(j["context"]["database"], kCpuDataset.string());
  EXPECT_EQ(j["context"]["command_line"], "api_test");
  EXPECT_EQ(j["networks"].size(), report.networks.size());
  EXPECT_THAT(report::render_text(report), HasSubstr("sum of ops ms"));
}

TEST_F(ApiDataset, ImportMergeAndExportPublishedMeasurements) {
  DatasetImportRequest imp;
  imp.file = kPublishedSmall;
  imp.db = dir_ / "published.sqlite";
  const report::DatasetImportReport imported = import_published(imp);
  EXPECT_EQ(imported.summary.records_read, 12u);
  EXPECT_EQ(imported.summary.stored.imported.size(), 3u);
  EXPECT_EQ(report::to_json(imported)["context"]["database"], imp.db.string());

  DatasetMergeRequest merge;
  merge.output = dir_ / "merged.sqlite";
  merge.inputs = {imp.db};
  const report::DatasetMergeReport merged = merge_datasets(merge);
  EXPECT_EQ(merged.summary.published_added, 3);
  EXPECT_THAT(report::render_text(merged), StartsWith("merged 1 file(s) into "));

  DatasetExportRequest exp;
  exp.db = merge.output;
  exp.table = DatasetTable::kPublished;
  const report::DatasetExportReport to_stdout = export_dataset(exp);
  EXPECT_EQ(to_stdout.rows, 3);
  EXPECT_EQ(report::render_text(to_stdout), to_stdout.csv);
  EXPECT_THAT(to_stdout.csv, StartsWith("# tool: nnergy\n"));
  exp.output = dir_ / "published.csv";
  const report::DatasetExportReport to_file = export_dataset(exp);
  EXPECT_TRUE(to_file.csv.empty());
  EXPECT_EQ(report::render_text(to_file),
            "wrote 3 published measurement rows to " + exp.output.string() + "\n");
}

TEST_F(ApiDataset, MessagesNameTheFilesAndSettings) {
  DatasetExportRequest exp;
  exp.db = dir_ / "missing.sqlite";
  EXPECT_THAT(invalid_input_message([&] { export_dataset(exp); }),
              HasSubstr("no such dataset file"));
  exp.db = kCpuDataset;
  exp.output = dir_ / "no-such-dir" / "out.csv";
  EXPECT_EQ(invalid_input_message([&] { export_dataset(exp); }),
            "output=" + exp.output.string() + ": cannot write the file");
  exp.names = SettingNames::kFlag;
  EXPECT_THAT(invalid_input_message([&] { export_dataset(exp); }), StartsWith("--output "));

  DatasetMergeRequest merge;
  merge.output = kCpuDataset;
  merge.inputs = {kCpuDataset};
  EXPECT_THAT(invalid_input_message([&] { merge_datasets(merge); }),
              HasSubstr("an input cannot also be the output"));
  DatasetImportRequest imp;
  imp.file = dir_ / "none.json";
  imp.db = dir_ / "never.sqlite";
  EXPECT_THAT(invalid_input_message([&] { import_published(imp); }), HasSubstr("no such file"));
  EXPECT_FALSE(std::filesystem::exists(imp.db));
}

}  // namespace
}  // namespace nnergy::api
