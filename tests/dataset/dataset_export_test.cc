#include "nnergy/dataset/dataset_export.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>

#include "dataset_fixture.h"
#include "nnergy/dataset/dataset_schema.h"
#include "nnergy/graph/op_signature.h"

namespace nnergy::dataset {
namespace {

using testing::DatasetTest;
using ::testing::HasSubstr;
using testing::tiny_network;

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

TEST_F(DatasetTest, ExportWritesContextHeaderAndOneRowPerMeasurement) {
  const graph::Network net = tiny_network();
  DatasetStore store = DatasetStore::open(file("export.sqlite"));
  const std::int64_t session =
      store.start_session({0, "", store.add_device({0, "Test CPU", "", "cpu", ""}), "t", "h",
                           "nnergy profile", "{}", "", std::nullopt});
  store.add_network(net, graph::Whitelist::standard());
  const std::string conv = graph::op_signature(net, net.nodes()[0]);
  MeasuredValues ok;
  ok.iterations = 10;
  ok.repeats = 2;
  ok.time_s = 0.25;
  ok.energy_j = 62.5;  // 250 W for 0.25 s
  store.record_measurement({0, session, 0, {conv, "inference", 0, "fp32"}, ok});
  store.record_measurement({0, session, 0, {conv, "training", 0, "fp32"}, ok});
  MeasuredValues failed;
  failed.status = MeasurementStatus::kError;
  failed.message = "out of memory, \"big\" tensor";
  store.record_measurement({0, session, 0, {conv, "inference", 0, "fp16"}, failed});

  std::ostringstream out;
  EXPECT_EQ(export_csv(store, out, {"nnergy dataset export --csv", true}), 3);
  const std::vector<std::string> lines = lines_of(out.str());
  std::vector<std::string> comments;
  std::vector<std::string> table;
  for (const std::string& line : lines) (line.starts_with("# ") ? comments : table).push_back(line);
  EXPECT_THAT(comments, ::testing::Contains("# row_count: 3"));
  EXPECT_THAT(comments, ::testing::Contains("# dataset_schema_version: " +
                                            std::to_string(kDatasetSchemaVersion)));
  EXPECT_THAT(comments, ::testing::Contains("# command_line: nnergy dataset export --csv"));
  EXPECT_THAT(comments, ::testing::Contains("# source: " + file("export.sqlite")));
  // Context first, then the header, then the rows.
  ASSERT_EQ(lines.size(), comments.size() + 4);
  EXPECT_EQ(lines[comments.size()], table[0]);

  const std::string& header = table[0];
  EXPECT_THAT(header, ::testing::StartsWith("device_name,device_uuid,"));
  for (const char* column : {",signature,", ",time_s,", ",time_std_s,", ",power_w,", ",energy_j,",
                             ",energy_std_j,", ",clock_mhz,", ",inference_flop_count,",
                             ",backward_byte_count,", ",samples_dropped,", ",status,"}) {
    EXPECT_THAT(header, HasSubstr(column));
  }
  EXPECT_EQ(std::count(header.begin(), header.end(), ','), csv_columns().size() - 1);

  // The signature holds commas and is quoted; the message's quotes are doubled.
  EXPECT_THAT(table[1], HasSubstr("\"" + conv + "\""));
  EXPECT_THAT(out.str(), HasSubstr("\"out of memory, \"\"big\"\" tensor\""));
  EXPECT_THAT(out.str(), HasSubstr(",0.25,"));
  EXPECT_THAT(out.str(), HasSubstr(",62.5,"));
  // No power source: power_w is an empty field (NaN in pandas), not 0.
  EXPECT_THAT(out.str(), HasSubstr(",0.25,,,,62.5,"));

  std::ostringstream ok_only;
  EXPECT_EQ(export_csv(store, ok_only, {"", false}), 2);
  EXPECT_THAT(ok_only.str(), HasSubstr("# row_count: 2"));
  EXPECT_THAT(ok_only.str(), ::testing::Not(HasSubstr("out of memory")));
}

}  // namespace
}  // namespace nnergy::dataset
