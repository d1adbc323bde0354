#include "nnergy/dataset/dataset_merge.h"

#include <map>
#include <optional>

#include "nnergy/dataset/sqlite_statement.h"

namespace nnergy::dataset {

namespace {

struct ExistingRow {
  MeasurementStatus status;
  std::string measured_utc;
};

// True when `incoming` should replace `existing` (the rule documented in dataset_merge.h).
bool source_wins(const ExistingRow& existing, const MeasuredValues& incoming) {
  if (existing.status != incoming.status) return incoming.status == MeasurementStatus::kOk;
  return incoming.measured_utc > existing.measured_utc;  // ISO 8601 UTC sorts as text
}

std::optional<ExistingRow> existing_row(SqliteStatement& find, std::int64_t device_id,
                                        std::string_view key_text, std::string_view mode,
                                        std::int64_t clock_mhz, std::string_view dtype,
                                        const std::string& path) {
  find.reset();
  find.bind(1, device_id).bind(2, key_text).bind(3, mode).bind(4, clock_mhz).bind(5, dtype);
  if (!find.step()) return std::nullopt;
  return ExistingRow{parse_measurement_status(find.column_text(0), path), find.column_text(1)};
}

// Counts the outcome and says whether to write the incoming row.
bool decide(const std::optional<ExistingRow>& existing, const MeasuredValues& incoming,
            std::int64_t& added, std::int64_t& replaced, std::int64_t& kept) {
  if (!existing) {
    ++added;
    return true;
  }
  if (source_wins(*existing, incoming)) {
    ++replaced;
    return true;
  }
  ++kept;
  return false;
}

}  // namespace

MergeSummary merge_into(DatasetStore& destination, const std::string& source_path) {
  const DatasetStore source = DatasetStore::open(source_path, OpenMode::kReadOnly);
  sqlite3* db = destination.connection();
  const std::string& path = destination.path();
  MergeSummary summary;

  SqliteTransaction transaction(db, path);
  std::map<std::int64_t, std::int64_t> device_ids;
  for (const DeviceRecord& device : source.devices()) {
    device_ids[device.id] = destination.add_device(device);
  }
  std::map<std::int64_t, std::int64_t> session_ids;
  for (SessionRecord session : source.sessions()) {
    const std::int64_t source_id = session.id;
    session.device_id = device_ids.at(session.device_id);
    session_ids[source_id] = destination.start_session(session);
  }
  for (const OpRecord& record : source.ops()) destination.add_op(record.op);
  for (const NetworkRecord& network : source.networks()) destination.add_network(network);

  SqliteStatement find_op_row(db,
                              "SELECT m.status, m.measured_utc FROM measurements m JOIN ops o "
                              "ON o.id = m.op_id WHERE m.device_id = ?1 AND o.signature = ?2 "
                              "AND m.mode = ?3 AND m.clock_mhz = ?4 AND m.dtype = ?5",
                              path);
  for (MeasurementRecord m : source.measurements()) {
    m.session_id = session_ids.at(m.session_id);
    const auto existing = existing_row(find_op_row, device_ids.at(m.device_id), m.key.signature,
                                       m.key.mode, m.key.clock_mhz, m.key.dtype, path);
    if (decide(existing, m.values, summary.measurements_added, summary.measurements_replaced,
               summary.measurements_kept)) {
      destination.record_measurement(m);
    }
  }

  // The network key is name + inputs_json; the two are joined with a byte that JSON text never
  // holds unescaped so one bound parameter can carry both.
  SqliteStatement find_network_row(
      db,
      "SELECT m.status, m.measured_utc FROM network_measurements m JOIN networks n "
      "ON n.id = m.network_id WHERE m.device_id = ?1 AND n.name || char(31) || n.inputs_json = ?2 "
      "AND m.mode = ?3 AND m.clock_mhz = ?4 AND m.dtype = ?5",
      path);
  for (NetworkMeasurementRecord m : source.network_measurements()) {
    m.session_id = session_ids.at(m.session_id);
    const std::string key_text = m.network_name + '\x1f' + m.network_inputs_json;
    const auto existing = existing_row(find_network_row, device_ids.at(m.device_id), key_text,
                                       m.mode, m.clock_mhz, m.dtype, path);
    if (decide(existing, m.values, summary.network_measurements_added,
               summary.network_measurements_replaced, summary.network_measurements_kept)) {
      destination.record_network_measurement(m);
    }
  }
  std::vector<published::PublishedMeasurement> published;
  for (StoredPublishedMeasurement& p : source.published_measurements()) {
    published.push_back(std::move(p.record));
  }
  PublishedStoreResult stored = destination.add_published_measurements(published);
  summary.published_added = static_cast<std::int64_t>(stored.imported.size());
  summary.published_already_present = static_cast<std::int64_t>(stored.already_present.size());
  summary.published_conflicts = std::move(stored.conflicts);
  transaction.commit();
  return summary;
}

MergeSummary merge_datasets(const std::string& destination_path,
                            const std::vector<std::string>& source_paths) {
  DatasetStore destination = DatasetStore::open(destination_path);
  MergeSummary total;
  for (const std::string& source : source_paths) {
    const MergeSummary part = merge_into(destination, source);
    total.measurements_added += part.measurements_added;
    total.measurements_replaced += part.measurements_replaced;
    total.measurements_kept += part.measurements_kept;
    total.network_measurements_added += part.network_measurements_added;
    total.network_measurements_replaced += part.network_measurements_replaced;
    total.network_measurements_kept += part.network_measurements_kept;
    total.published_added += part.published_added;
    total.published_already_present += part.published_already_present;
    total.published_conflicts.insert(total.published_conflicts.end(),
                                     part.published_conflicts.begin(),
                                     part.published_conflicts.end());
  }
  return total;
}

}  // namespace nnergy::dataset
