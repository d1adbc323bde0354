#include "nnergy/dataset/dataset_merge.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <algorithm>

#include "dataset_fixture.h"
#include "nnergy/core/error.h"
#include "nnergy/graph/op_signature.h"

namespace nnergy::dataset {
namespace {

using testing::DatasetTest;
using testing::tiny_network;

MeasuredValues values(MeasurementStatus status, double time_s, const std::string& measured_utc) {
  MeasuredValues v;
  v.iterations = 100;
  v.repeats = 3;
  v.status = status;
  if (status == MeasurementStatus::kOk) {
    v.time_s = time_s;
    v.time_std_s = 0.0;
  } else {
    v.message = "failed";
  }
  v.measured_utc = measured_utc;
  return v;
}

struct ShardFile {
  std::string path;
  std::string session_uuid;
};

// A dataset on one device holding the tiny network and the given (node, time, status, date)
// op measurements in inference fp32 at the default clock.
void write_shard(
    const ShardFile& shard,
    const std::vector<std::tuple<std::size_t, double, MeasurementStatus, std::string>>& rows) {
  const graph::Network net = tiny_network();
  DatasetStore store = DatasetStore::open(shard.path);
  SessionRecord session;
  session.session_uuid = shard.session_uuid;
  session.device_id = store.add_device({0, "Test GPU", "GPU-1", "cuda", "550"});
  session.tool_version = "test";
  const std::int64_t session_id = store.start_session(session);
  store.add_network(net, graph::Whitelist::standard());
  for (const auto& [node, time_s, status, date] : rows) {
    store.record_measurement({0,
                              session_id,
                              0,
                              {graph::op_signature(net, net.nodes()[node]), "inference", 0, "fp32"},
                              values(status, time_s, date)});
  }
  NetworkMeasurementRecord whole;
  whole.session_id = session_id;
  whole.network_name = net.name;
  whole.network_inputs_json = network_inputs_json(net);
  whole.mode = "inference";
  whole.dtype = "fp32";
  whole.values = values(MeasurementStatus::kOk, rows.empty() ? 0.0 : std::get<1>(rows.front()),
                        rows.empty() ? "" : std::get<3>(rows.front()));
  store.record_network_measurement(whole);
}

double time_of(const DatasetStore& store, const std::string& signature) {
  for (const MeasurementRecord& m : store.measurements()) {
    if (m.key.signature == signature) return m.values.time_s.value_or(-1.0);
  }
  return -2.0;
}

TEST_F(DatasetTest, MergeJoinsFilesWithoutDuplicatesAndTheBetterRowWins) {
  const graph::Network net = tiny_network();
  const auto sig = [&net](std::size_t n) { return graph::op_signature(net, net.nodes()[n]); };
  constexpr auto kOk = MeasurementStatus::kOk;
  constexpr auto kError = MeasurementStatus::kError;
  const ShardFile a{file("a.sqlite"), "aaaaaaaa-0000-0000-0000-000000000000"};
  const ShardFile b{file("b.sqlite"), "bbbbbbbb-0000-0000-0000-000000000000"};
  // Node 0: measured in both, b later → b wins. Node 1: ok in a, a later error in b → a's ok row
  // stays. Node 2: only in a. Node 4: error in a, ok in b → b.
  write_shard(a, {{0, 1.0, kOk, "2026-01-01T00:00:00.000Z"},
                  {1, 3.0, kOk, "2026-01-01T00:00:00.000Z"},
                  {2, 4.0, kOk, "2026-01-01T00:00:00.000Z"},
                  {4, 0.0, kError, "2026-01-03T00:00:00.000Z"}});
  write_shard(b, {{0, 2.0, kOk, "2026-01-02T00:00:00.000Z"},
                  {1, 0.0, kError, "2026-01-02T00:00:00.000Z"},
                  {4, 5.0, kOk, "2026-01-02T00:00:00.000Z"}});

  const std::string merged = file("merged.sqlite");
  const MergeSummary summary = merge_datasets(merged, {a.path, b.path});
  EXPECT_EQ(summary.measurements_added, 4);     // all of a
  EXPECT_EQ(summary.measurements_replaced, 2);  // nodes 0 and 4 from b
  EXPECT_EQ(summary.measurements_kept, 1);      // node 1
  EXPECT_EQ(summary.network_measurements_added, 1);
  EXPECT_EQ(summary.network_measurements_replaced, 1);  // b's is newer

  {
    const DatasetStore store = DatasetStore::open(merged, OpenMode::kReadOnly);
    EXPECT_EQ(store.devices().size(), 1u);
    EXPECT_EQ(store.sessions().size(), 2u);
    EXPECT_EQ(store.ops().size(), 4u);
    EXPECT_EQ(store.networks().size(), 1u);
    EXPECT_EQ(store.measurements().size(), 4u);
    EXPECT_EQ(store.network_measurements().size(), 1u);
    EXPECT_DOUBLE_EQ(time_of(store, sig(0)), 2.0);
    EXPECT_DOUBLE_EQ(time_of(store, sig(1)), 3.0);
    EXPECT_DOUBLE_EQ(time_of(store, sig(2)), 4.0);
    EXPECT_DOUBLE_EQ(time_of(store, sig(4)), 5.0);
    EXPECT_DOUBLE_EQ(*store.network_measurements()[0].values.time_s, 2.0);
    // The winning row keeps its own session.
    for (const MeasurementRecord& m : store.measurements()) {
      const auto& sessions = store.sessions();
      const auto session =
          std::find_if(sessions.begin(), sessions.end(),
                       [&m](const SessionRecord& s) { return s.id == m.session_id; });
      ASSERT_NE(session, sessions.end());
      const bool from_b = m.key.signature == sig(0) || m.key.signature == sig(4);
      EXPECT_EQ(session->session_uuid, from_b ? b.session_uuid : a.session_uuid) << m.key.signature;
    }
  }

  // Merging the same files again changes nothing.
  const MergeSummary again = merge_datasets(merged, {a.path, b.path});
  EXPECT_EQ(again.measurements_added, 0);
  EXPECT_EQ(again.measurements_replaced, 0);
  const DatasetStore store = DatasetStore::open(merged, OpenMode::kReadOnly);
  EXPECT_EQ(store.measurements().size(), 4u);
  EXPECT_EQ(store.sessions().size(), 2u);
  EXPECT_DOUBLE_EQ(time_of(store, sig(0)), 2.0);
}

TEST_F(DatasetTest, MergeStopsWithInvalidInputAtAFileOfAnotherSchemaVersion) {
  const ShardFile good{file("good.sqlite"), "cccccccc-0000-0000-0000-000000000000"};
  write_shard(good, {{0, 1.0, MeasurementStatus::kOk, "2026-01-01T00:00:00.000Z"}});
  const std::string old = file("old.sqlite");
  DatasetStore::open(old);
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(old.c_str(), &db), SQLITE_OK);
  sqlite3_exec(db, "PRAGMA user_version = 99", nullptr, nullptr, nullptr);
  sqlite3_close(db);

  const std::string merged = file("merged.sqlite");
  try {
    merge_datasets(merged, {good.path, old});
    ADD_FAILURE() << "expected InvalidInput";
  } catch (const InvalidInput& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr(old));
    EXPECT_THAT(e.what(), ::testing::HasSubstr("schema version 99"));
  }
  // The good file was merged before the bad one was opened; its rows are complete.
  const DatasetStore store = DatasetStore::open(merged, OpenMode::kReadOnly);
  EXPECT_EQ(store.measurements().size(), 1u);
}

}  // namespace
}  // namespace nnergy::dataset
