// Published measurements: the JSON reader on a fixture with known answers, the store's table
// (round trip, idempotent re-import, conflicts, filters), the version-1 migration, the CSV
// export, and the full calibration corpus in data/calibration/.
#include "nnergy/published/published_measurement.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "dataset_fixture.h"
#include "nnergy/core/error.h"
#include "nnergy/dataset/dataset_export.h"
#include "nnergy/dataset/dataset_merge.h"
#include "nnergy/dataset/dataset_schema.h"
#include "nnergy/dataset/dataset_store.h"
#include "nnergy/dataset/published_import.h"

namespace nnergy::dataset {
namespace {

using testing::DatasetTest;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

const std::string kSmallFixture =
    std::string(NNERGY_TEST_FIXTURE_DIR) + "/dataset/published_small.json";
const std::string kCorpus = std::string(NNERGY_TEST_DATA_DIR) + "/calibration/measured_public.json";

// Exact binary equality is right for values read from JSON text and stored as SQLite REAL:
// both keep the double bit for bit.
constexpr double kExact = 0.0;

const published::RejectedRecord* find_rejected(const published::PublishedReadResult& r,
                                               const std::string& name) {
  for (const published::RejectedRecord& rejected : r.rejected) {
    if (rejected.name() == name) return &rejected;
  }
  return nullptr;
}

TEST(PublishedReader, SmallFixtureKnownAnswers) {
  const published::PublishedReadResult r = published::read_published_measurements(kSmallFixture);
  EXPECT_EQ(r.records_read, 12u);
  ASSERT_EQ(r.records.size(), 3u);
  EXPECT_EQ(r.rejected.size(), 9u);

  const published::PublishedMeasurement& full = r.records[0];
  EXPECT_EQ(full.id, "pub0001");
  EXPECT_EQ(full.gpu, "NVIDIA A100-SXM4-40GB");
  EXPECT_EQ(full.network, "ResNet-50");
  EXPECT_EQ(full.mode, "training (fwd+bwd, no optimizer)");
  EXPECT_EQ(full.batch, 12);
  EXPECT_EQ(full.input_shape, "12x3x224x224");
  EXPECT_EQ(full.precision, "fp32");
  EXPECT_EQ(full.clock_mhz, 1410);
  EXPECT_EQ(full.quantity, "time_per_iteration");
  EXPECT_NEAR(full.value, 125.5, kExact);
  EXPECT_EQ(full.unit, "ms");
  ASSERT_TRUE(full.value_si.has_value());
  EXPECT_NEAR(*full.value_si, 0.1255, kExact);
  EXPECT_EQ(full.unit_si, "s");
  EXPECT_TRUE(full.measured);
  EXPECT_EQ(full.derivation, "mean_of_raw_samples_computed_here");
  EXPECT_EQ(full.grade, "A");
  EXPECT_EQ(full.n_samples, 50);
  EXPECT_EQ(full.median_ms, 125.0);
  EXPECT_EQ(full.stdev_ms, 2.25);
  EXPECT_FALSE(full.layer.has_value());
  EXPECT_THAT(full.notes, HasSubstr("\"quote\" and a # sign"));

  EXPECT_EQ(r.records[1].id, "pub0002");
  EXPECT_EQ(r.records[1].layer, "bert.encoder.layer.0.attention.self.query (Linear)");
  EXPECT_FALSE(r.records[1].clock_mhz.has_value());
  EXPECT_FALSE(r.records[1].n_samples.has_value());

  const published::PublishedMeasurement& nulls = r.records[2];
  EXPECT_EQ(nulls.id, "pub0003");
  EXPECT_FALSE(nulls.batch.has_value());
  EXPECT_FALSE(nulls.input_shape.has_value());
  EXPECT_FALSE(nulls.precision.has_value()) << "a null precision is accepted as unknown";
  EXPECT_NEAR(nulls.value, 940.0, kExact) << "an integer value is a number";
  EXPECT_EQ(nulls.grade, "C");
}

TEST(PublishedReader, EveryRejectionIsNamedWithItsReason) {
  const published::PublishedReadResult r = published::read_published_measurements(kSmallFixture);
  const std::map<std::string, std::string> expected = {
      {"pub0004", "'value' is missing"},
      {"pub0005", "'unit' is missing"},
      {"pub0006", "'unit_si' is missing"},
      {"pub0007", "'value' is the string \"940 W\" (expected a number)"},
      {"pub0008", "grade 'D' is not one of: A, B, C"},
      {"pub0009", "'measured' is false"},
      {"record [10]", "'id' is missing"},
      {"record [11]", "the record is the number 42 (expected an object)"},
  };
  for (const auto& [name, reason] : expected) {
    const published::RejectedRecord* rejected = find_rejected(r, name);
    ASSERT_NE(rejected, nullptr) << name << " is not among the rejected";
    EXPECT_THAT(rejected->reason, HasSubstr(reason)) << name;
  }
  // The duplicate is the second record with id pub0001, at index 9; the first one is kept.
  std::vector<std::size_t> duplicate_indices;
  for (const published::RejectedRecord& rejected : r.rejected) {
    if (rejected.reason.find("duplicate id") != std::string::npos) {
      duplicate_indices.push_back(rejected.index);
      EXPECT_EQ(rejected.id, "pub0001");
      EXPECT_THAT(rejected.reason, HasSubstr("record [0]"));
    }
  }
  EXPECT_THAT(duplicate_indices, ElementsAre(9u));
  EXPECT_EQ(r.rejected.size(), expected.size() + 1);
}

TEST(PublishedReader, EveryProblemOfOneRecordIsListed) {
  const published::PublishedReadResult r = published::parse_published_measurements(
      R"([{"id": "r1", "grade": "E", "measured": false, "colour": "red"}])", "inline.json");
  ASSERT_EQ(r.rejected.size(), 1u);
  const std::string& reason = r.rejected[0].reason;
  for (const char* part :
       {"'value' is missing", "'unit' is missing", "'unit_si' is missing", "grade 'E'",
        "'measured' is false", "unknown field 'colour'", "'gpu' is missing"}) {
    EXPECT_THAT(reason, HasSubstr(part));
  }
}

TEST(PublishedReader, NotJsonNamesFileLineAndByteOffset) {
  // Line 3 starts at byte 7; the parser stops at the 'o' of `nope` (byte 16, column 10), the
  // first character that cannot continue the literal `null`.
  try {
    published::parse_published_measurements("[\n {},\n {\"id\": nope}\n]", "broken.json");
    FAIL() << "expected InvalidInput";
  } catch (const InvalidInput& e) {
    EXPECT_THAT(e.what(), HasSubstr("broken.json"));
    EXPECT_THAT(e.what(), HasSubstr("line 3, column 10 (byte offset 16)"));
    EXPECT_THAT(e.what(), HasSubstr("expected a JSON list"));
  }
}

TEST(PublishedReader, NotAListAndMissingFileAreInvalidInput) {
  try {
    published::parse_published_measurements(R"({"id": "r1"})", "object.json");
    FAIL() << "expected InvalidInput";
  } catch (const InvalidInput& e) {
    EXPECT_THAT(e.what(), HasSubstr("object.json"));
    EXPECT_THAT(e.what(), HasSubstr("found an object"));
  }
  EXPECT_THROW(published::read_published_measurements("/nonexistent/published.json"), InvalidInput);
}

// nlohmann::json throws out_of_range, not parse_error, for a number beyond double's range: it
// escaped the reader (exit 1) instead of InvalidInput (the same bug fuzz/ found in the other JSON
// readers).
TEST(PublishedReader, NumberBeyondDoubleIsInvalidInput) {
  try {
    published::parse_published_measurements(R"([{"id": "r1", "value": 1e999}])", "big.json");
    FAIL() << "expected InvalidInput";
  } catch (const InvalidInput& e) {
    EXPECT_THAT(e.what(), HasSubstr("big.json: not valid JSON"));
    EXPECT_THAT(e.what(), HasSubstr("expected a JSON list"));
  }
}

TEST(PublishedReader, DifferingFieldsNamesEachChangedField) {
  const published::PublishedReadResult r = published::read_published_measurements(kSmallFixture);
  published::PublishedMeasurement changed = r.records[0];
  EXPECT_TRUE(published::differing_fields(r.records[0], changed).empty());
  changed.value = 126;
  changed.layer = "x";
  EXPECT_THAT(published::differing_fields(r.records[0], changed), ElementsAre("value", "layer"));
}

TEST_F(DatasetTest, PublishedRoundTripIsExactAndReimportAddsNothing) {
  const published::PublishedReadResult r = published::read_published_measurements(kSmallFixture);
  DatasetStore store = DatasetStore::open(file("pub.sqlite"));
  const PublishedStoreResult first = store.add_published_measurements(r.records);
  EXPECT_THAT(first.imported, ElementsAre("pub0001", "pub0002", "pub0003"));
  EXPECT_TRUE(first.already_present.empty());
  EXPECT_TRUE(first.conflicts.empty());

  const std::vector<StoredPublishedMeasurement> stored = store.published_measurements();
  ASSERT_EQ(stored.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(stored[i].record, r.records[i]) << "every field, optional ones included";
    EXPECT_EQ(stored[i].imported_utc.size(), 24u) << stored[i].imported_utc;  // ISO 8601 with ms
  }

  const PublishedStoreResult second = store.add_published_measurements(r.records);
  EXPECT_TRUE(second.imported.empty());
  EXPECT_THAT(second.already_present, ElementsAre("pub0001", "pub0002", "pub0003"));
  EXPECT_TRUE(second.conflicts.empty());
  EXPECT_EQ(store.published_measurements(), stored) << "the first import's rows are untouched";
}

TEST_F(DatasetTest, PublishedConflictIsReportedAndTheStoredRecordKept) {
  const published::PublishedReadResult r = published::read_published_measurements(kSmallFixture);
  DatasetStore store = DatasetStore::open(file("pub.sqlite"));
  store.add_published_measurements(r.records);
  published::PublishedMeasurement changed = r.records[1];
  changed.value = 0.5;
  changed.notes = "re-measured";
  const PublishedStoreResult result = store.add_published_measurements({changed});
  EXPECT_TRUE(result.imported.empty());
  ASSERT_EQ(result.conflicts.size(), 1u);
  EXPECT_EQ(result.conflicts[0].id, "pub0002");
  EXPECT_THAT(result.conflicts[0].fields, ElementsAre("value", "notes"));
  PublishedFilter only_pub0002;
  only_pub0002.quantity = "layer_forward_time";
  const auto stored = store.published_measurements(only_pub0002);
  ASSERT_EQ(stored.size(), 1u);
  EXPECT_NEAR(stored[0].record.value, 0.25, kExact) << "not overwritten";
}

TEST_F(DatasetTest, PublishedFiltersByGpuQuantityAndGrade) {
  DatasetStore store = DatasetStore::open(file("pub.sqlite"));
  store.add_published_measurements(published::read_published_measurements(kSmallFixture).records);
  const auto ids = [&store](const PublishedFilter& filter) {
    std::vector<std::string> out;
    for (const auto& s : store.published_measurements(filter)) out.push_back(s.record.id);
    return out;
  };
  PublishedFilter gpu;
  gpu.gpu = "NVIDIA A100-SXM4-40GB";
  EXPECT_THAT(ids(gpu), ElementsAre("pub0001", "pub0002"));
  PublishedFilter grade;
  grade.grade = "C";
  EXPECT_THAT(ids(grade), ElementsAre("pub0003"));
  PublishedFilter both = gpu;
  both.quantity = "time_per_iteration";
  EXPECT_THAT(ids(both), ElementsAre("pub0001"));
  both.grade = "C";
  EXPECT_TRUE(ids(both).empty());
  EXPECT_EQ(ids({}).size(), 3u);
}

// A version-1 file as nnergy before the published table wrote it: no published_measurements,
// the byte counts of table ops named {pass}_bytes, user_version 1.
void make_version_1(const std::string& path) {
  DatasetStore::open(path);
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db,
                         "DROP TABLE published_measurements; "
                         "ALTER TABLE ops RENAME COLUMN inference_byte_count TO inference_bytes; "
                         "ALTER TABLE ops RENAME COLUMN training_forward_byte_count TO "
                         "training_forward_bytes; "
                         "ALTER TABLE ops RENAME COLUMN backward_byte_count TO backward_bytes; "
                         "PRAGMA user_version = 1; "
                         "UPDATE meta SET value = '1' WHERE key = 'schema_version';",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
}

TEST_F(DatasetTest, Version1FileIsReadAsItIsAndMigratedWhenWritten) {
  const std::string path = file("v1.sqlite");
  make_version_1(path);
  {
    const DatasetStore reader = DatasetStore::open(path, OpenMode::kReadOnly);
    EXPECT_EQ(reader.schema_version(), 1);
    EXPECT_TRUE(reader.published_measurements().empty());
    std::ostringstream csv;
    EXPECT_EQ(export_published_csv(reader, csv), 0);
  }
  DatasetStore writer = DatasetStore::open(path);
  EXPECT_EQ(writer.schema_version(), kDatasetSchemaVersion);
  std::map<std::string, std::string> meta;
  for (const auto& [key, value] : writer.meta()) meta[key] = value;
  EXPECT_EQ(meta["schema_version"], std::to_string(kDatasetSchemaVersion));
  EXPECT_EQ(meta["migrated_from_schema_version"], "1");
  EXPECT_FALSE(meta["migrated_utc"].empty());
  const PublishedStoreResult r = writer.add_published_measurements(
      published::read_published_measurements(kSmallFixture).records);
  EXPECT_EQ(r.imported.size(), 3u);
}

TEST_F(DatasetTest, PublishedCsvExportHasContextHeaderAndOneRowPerRecord) {
  DatasetStore store = DatasetStore::open(file("pub.sqlite"));
  store.add_published_measurements(published::read_published_measurements(kSmallFixture).records);
  std::ostringstream out;
  CsvExportOptions options;
  options.command_line = "nnergy dataset export --table published";
  EXPECT_EQ(export_published_csv(store, out, options), 3);
  std::vector<std::string> lines;
  std::istringstream in(out.str());
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  std::vector<std::string> comments;
  std::size_t i = 0;
  while (i < lines.size() && lines[i].rfind("# ", 0) == 0) comments.push_back(lines[i++]);
  EXPECT_THAT(comments, ::testing::Contains("# row_count: 3"));
  EXPECT_THAT(comments, ::testing::Contains("# dataset_schema_version: " +
                                            std::to_string(kDatasetSchemaVersion)));
  ASSERT_EQ(lines.size(), i + 4);
  EXPECT_THAT(lines[i], ::testing::StartsWith("id,source,location,gpu,"));
  EXPECT_THAT(lines[i], HasSubstr(",value,unit,value_si,unit_si,"));
  // pub0001: notes hold a comma, quotes and '#', so the field is quoted with doubled quotes.
  EXPECT_THAT(lines[i + 1], ::testing::StartsWith("pub0001,"));
  EXPECT_THAT(lines[i + 1], HasSubstr(",1410,time_per_iteration,125.5,ms,0.1255,s,1,"));
  EXPECT_THAT(lines[i + 1], HasSubstr("\"Known answers for the reader test, with a comma, a "
                                      "\"\"quote\"\" and a # sign.\""));
  // pub0003: batch, input_shape, precision and clock are empty fields.
  EXPECT_THAT(lines[i + 3], HasSubstr(",microbenchmark,,,,CUDA microbenchmarks,,"));
}

TEST_F(DatasetTest, MergeCopiesPublishedMeasurementsByIdAndReportsConflicts) {
  const std::vector<published::PublishedMeasurement> records =
      published::read_published_measurements(kSmallFixture).records;
  const std::string a = file("a.sqlite");
  const std::string b = file("b.sqlite");
  DatasetStore::open(a).add_published_measurements({records[0], records[1]});
  published::PublishedMeasurement changed = records[1];
  changed.grade = "B";
  DatasetStore::open(b).add_published_measurements({changed, records[2]});

  const MergeSummary s = merge_datasets(file("out.sqlite"), {a, b});
  EXPECT_EQ(s.published_added, 3);  // pub0001 and pub0002 from a, pub0003 from b
  EXPECT_EQ(s.published_already_present, 0);
  ASSERT_EQ(s.published_conflicts.size(), 1u);
  EXPECT_EQ(s.published_conflicts[0].id, "pub0002");
  EXPECT_THAT(s.published_conflicts[0].fields, ElementsAre("grade"));
  const auto stored = DatasetStore::open(file("out.sqlite")).published_measurements();
  ASSERT_EQ(stored.size(), 3u);
  EXPECT_EQ(stored[1].record, records[1]) << "the record merged first is kept";

  const MergeSummary again = merge_datasets(file("out.sqlite"), {a});
  EXPECT_EQ(again.published_added, 0);
  EXPECT_EQ(again.published_already_present, 2);
}

// The whole calibration corpus: every record that passes validation is imported, the rest are
// named, and a second import adds nothing.
TEST_F(DatasetTest, FullCalibrationCorpusImportsEveryValidRecord) {
  std::ifstream file_in(kCorpus);
  ASSERT_TRUE(file_in) << kCorpus;
  const nlohmann::json corpus = nlohmann::json::parse(file_in);
  ASSERT_EQ(corpus.size(), 918u);

  // The validation rules counted independently of the reader, on the parsed JSON: a text id
  // not seen before, a numeric value, unit and unit_si, grade A/B/C, measured true.
  std::size_t valid_in_file = 0;
  std::set<std::string> ids_seen;
  for (const nlohmann::json& record : corpus) {
    const bool has_id = record.contains("id") && record["id"].is_string();
    const bool first_of_id = has_id && ids_seen.insert(record["id"].get<std::string>()).second;
    const bool valid =
        first_of_id && record.contains("value") && record["value"].is_number() &&
        record.contains("unit") && record["unit"].is_string() && record.contains("unit_si") &&
        record["unit_si"].is_string() && record.contains("grade") &&
        (record["grade"] == "A" || record["grade"] == "B" || record["grade"] == "C") &&
        record.contains("measured") && record["measured"] == true;
    if (valid) ++valid_in_file;
  }

  const std::string db = file("corpus.sqlite");
  const PublishedImportSummary first = import_published_measurements(kCorpus, db);
  EXPECT_EQ(first.records_read, 918u);
  EXPECT_EQ(first.accepted + first.rejected.size(), 918u);
  EXPECT_EQ(first.accepted, valid_in_file);
  EXPECT_EQ(first.stored.imported.size(), valid_in_file);
  EXPECT_TRUE(first.stored.conflicts.empty());
  std::cout << "calibration corpus: " << first.stored.imported.size() << " imported, "
            << first.rejected.size() << " rejected\n";
  for (const published::RejectedRecord& r : first.rejected) {
    std::cout << "  rejected " << r.name() << ": " << r.reason << "\n";
  }
  std::int64_t per_source_total = 0;
  for (const auto& [source, count] : first.per_source) per_source_total += count;
  EXPECT_EQ(per_source_total, static_cast<std::int64_t>(first.accepted));

  const DatasetStore store = DatasetStore::open(db, OpenMode::kReadOnly);
  EXPECT_EQ(store.published_measurements().size(), first.accepted);
  PublishedFilter grade_a;
  grade_a.grade = "A";
  std::size_t grade_a_in_file = 0;
  for (const auto& record : corpus) {
    if (record.value("grade", "") == "A") ++grade_a_in_file;
  }
  EXPECT_EQ(store.published_measurements(grade_a).size(), grade_a_in_file);

  const PublishedImportSummary second = import_published_measurements(kCorpus, db);
  EXPECT_TRUE(second.stored.imported.empty());
  EXPECT_EQ(second.stored.already_present.size(), first.accepted);
}

}  // namespace
}  // namespace nnergy::dataset
