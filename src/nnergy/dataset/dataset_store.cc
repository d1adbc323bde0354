#include "nnergy/dataset/dataset_store.h"

#include <fmt/format.h>
#include <sqlite3.h>

#include <nlohmann/json.hpp>
#include <random>
#include <utility>

#include "nnergy/core/error.h"
#include "nnergy/dataset/dataset_schema.h"
#include "nnergy/dataset/dataset_time.h"
#include "nnergy/dataset/sqlite_statement.h"
#include "nnergy/graph/op_signature.h"

namespace nnergy::dataset {

namespace {

// Columns of MeasuredValues, in the order bind_values and read_values use.
constexpr std::string_view kValueColumns =
    "iterations, repeats, time_s, time_std_s, power_w, power_std_w, energy_j, energy_std_j, "
    "samples_kept, samples_dropped, status, message, measured_utc";
constexpr int kValueColumnCount = 13;

// Assignments that make a re-measurement replace every measured column of the old row.
constexpr std::string_view kValueUpdates =
    "session_id = excluded.session_id, iterations = excluded.iterations, "
    "repeats = excluded.repeats, time_s = excluded.time_s, time_std_s = excluded.time_std_s, "
    "power_w = excluded.power_w, power_std_w = excluded.power_std_w, "
    "energy_j = excluded.energy_j, energy_std_j = excluded.energy_std_j, "
    "samples_kept = excluded.samples_kept, samples_dropped = excluded.samples_dropped, "
    "status = excluded.status, message = excluded.message, measured_utc = excluded.measured_utc";

// The columns of table ops in a file of schema `version`, in the order read_op reads them.
std::string op_columns(int version) {
  std::string columns =
      "signature, op_type, op_class, dtype, input_shapes_json, attributes_json, whitelisted, "
      "known, parameter_count";
  for (const char* pass : kOpPasses) {
    columns += fmt::format(", {0}_mac_count, {0}_flop_count, {1}, {0}_kernel_count", pass,
                           ops_byte_count_column(pass, version));
  }
  return columns;
}

std::string placeholders(int first, int count) {
  std::string out;
  for (int i = 0; i < count; ++i) out += fmt::format("{}?{}", i == 0 ? "" : ", ", first + i);
  return out;
}

void bind_values(SqliteStatement& statement, int first, const MeasuredValues& v) {
  statement.bind(first, v.iterations)
      .bind(first + 1, v.repeats)
      .bind(first + 2, v.time_s)
      .bind(first + 3, v.time_std_s)
      .bind(first + 4, v.power_w)
      .bind(first + 5, v.power_std_w)
      .bind(first + 6, v.energy_j)
      .bind(first + 7, v.energy_std_j)
      .bind(first + 8, v.samples_kept)
      .bind(first + 9, v.samples_dropped)
      .bind(first + 10, to_string(v.status))
      .bind(first + 11, std::string_view(v.message))
      .bind(first + 12,
            std::string_view(v.measured_utc.empty() ? utc_now_iso8601() : v.measured_utc));
}

MeasuredValues read_values(const SqliteStatement& row, int first, const std::string& path) {
  MeasuredValues v;
  v.iterations = row.column_int(first);
  v.repeats = row.column_int(first + 1);
  v.time_s = row.column_optional_double(first + 2);
  v.time_std_s = row.column_optional_double(first + 3);
  v.power_w = row.column_optional_double(first + 4);
  v.power_std_w = row.column_optional_double(first + 5);
  v.energy_j = row.column_optional_double(first + 6);
  v.energy_std_j = row.column_optional_double(first + 7);
  v.samples_kept = row.column_int(first + 8);
  v.samples_dropped = row.column_int(first + 9);
  v.status = parse_measurement_status(row.column_text(first + 10), path);
  v.message = row.column_text(first + 11);
  v.measured_utc = row.column_text(first + 12);
  return v;
}

void bind_pass(SqliteStatement& statement, int first, const graph::PassCost& pass) {
  statement.bind(first, pass.mac_count)
      .bind(first + 1, pass.flop_count)
      .bind(first + 2, pass.byte_count)
      .bind(first + 3, pass.kernel_count);
}

graph::PassCost read_pass(const SqliteStatement& row, int first) {
  graph::PassCost pass;
  pass.mac_count = row.column_double(first);
  pass.flop_count = row.column_double(first + 1);
  pass.byte_count = row.column_double(first + 2);
  pass.kernel_count = row.column_double(first + 3);
  return pass;
}

// One row of table ops; the JSON columns become typed here, and nowhere else. Throws
// InvalidInput naming the file, the row and the column for a value that is not what nnergy
// writes.
OpRecord read_op(const SqliteStatement& row, const std::string& path) {
  OpRecord record;
  record.id = row.column_int(0);
  graph::OpDescriptor& op = record.op;
  const std::string where = fmt::format("{}: table ops, row {}", path, record.id);
  op.signature = row.column_text(1);
  op.op_type = row.column_text(2);
  op.op_class = graph::parse_op_class(row.column_text(3), where + ", op_class");
  op.dtype = graph::parse_data_type(row.column_text(4), where + ", dtype");
  op.inputs = parse_inputs_json(row.column_text(5), where + ", input_shapes_json");
  op.attributes = parse_attributes_json(row.column_text(6), where + ", attributes_json");
  op.whitelisted = row.column_int(7) != 0;
  op.known = row.column_int(8) != 0;
  op.parameter_count = row.column_int(9);
  op.inference = read_pass(row, 10);
  op.training_forward = read_pass(row, 14);
  op.backward = read_pass(row, 18);
  return record;
}

// Inserts `op` unless its signature is stored; the caller holds the transaction.
std::int64_t insert_op(sqlite3* db, const std::string& path, const graph::OpDescriptor& op) {
  // Files are written at kDatasetSchemaVersion only (older ones are migrated when opened for
  // writing), so the statement's text is built once.
  static const std::string kInsert =
      fmt::format("INSERT INTO ops ({}) VALUES ({}) ON CONFLICT (signature) DO NOTHING",
                  op_columns(kDatasetSchemaVersion), placeholders(1, 21));
  SqliteStatement insert(db, kInsert, path);
  insert.bind(1, std::string_view(op.signature))
      .bind(2, std::string_view(op.op_type))
      .bind(3, graph::to_string(op.op_class))
      .bind(4, graph::to_string(op.dtype))
      .bind(5, std::string_view(inputs_json(op.inputs)))
      .bind(6, std::string_view(attributes_json(op.attributes)))
      .bind(7, std::int64_t{op.whitelisted ? 1 : 0})
      .bind(8, std::int64_t{op.known ? 1 : 0})
      .bind(9, op.parameter_count);
  bind_pass(insert, 10, op.inference);
  bind_pass(insert, 14, op.training_forward);
  bind_pass(insert, 18, op.backward);
  insert.run();
  SqliteStatement find(db, "SELECT id FROM ops WHERE signature = ?1", path);
  find.bind(1, std::string_view(op.signature));
  find.step();
  return find.column_int(0);
}

std::optional<std::int64_t> find_id(sqlite3* db, const std::string& path, std::string_view sql,
                                    std::string_view key) {
  SqliteStatement find(db, sql, path);
  find.bind(1, key);
  if (!find.step()) return std::nullopt;
  return find.column_int(0);
}

std::int64_t session_device(sqlite3* db, const std::string& path, std::int64_t session_id) {
  SqliteStatement find(db, "SELECT device_id FROM sessions WHERE id = ?1", path);
  find.bind(1, session_id);
  if (!find.step()) {
    throw InternalError(fmt::format("dataset '{}' has no session {}", path, session_id));
  }
  return find.column_int(0);
}

std::int64_t insert_network(sqlite3* db, const std::string& path, const NetworkRecord& network) {
  SqliteStatement insert(db,
                         "INSERT INTO networks (name, inputs_json, source, description) "
                         "VALUES (?1, ?2, ?3, ?4) ON CONFLICT (name, inputs_json) DO UPDATE SET "
                         "source = excluded.source, description = excluded.description "
                         "RETURNING id",
                         path);
  insert.bind(1, std::string_view(network.name))
      .bind(2, std::string_view(network.inputs_json))
      .bind(3, std::string_view(network.source))
      .bind(4, std::string_view(network.description));
  insert.step();
  const std::int64_t id = insert.column_int(0);
  insert.run();
  SqliteStatement count(db,
                        "INSERT INTO network_ops (network_id, op_id, count) VALUES (?1, ?2, ?3) "
                        "ON CONFLICT (network_id, op_id) DO UPDATE SET count = excluded.count",
                        path);
  for (const auto& [signature, occurrences] : network.op_counts) {
    const auto op_id = find_id(db, path, "SELECT id FROM ops WHERE signature = ?1", signature);
    if (!op_id) {
      throw InternalError(
          fmt::format("dataset '{}': network '{}' counts op '{}', which is not "
                      "stored",
                      path, network.name, signature));
    }
    count.bind(1, id).bind(2, *op_id).bind(3, occurrences);
    count.run();
    count.reset();
  }
  return id;
}

std::string new_session_uuid() {
  std::random_device device;
  std::mt19937_64 generator((std::uint64_t{device()} << 32) ^ device());
  const std::uint64_t high = generator();
  const std::uint64_t low = generator();
  return fmt::format("{:08x}-{:04x}-{:04x}-{:04x}-{:012x}", high >> 32, (high >> 16) & 0xffff,
                     high & 0xffff, low >> 48, low & 0xffffffffffffULL);
}

}  // namespace

std::string_view to_string(MeasurementStatus status) {
  return status == MeasurementStatus::kOk ? "ok" : "error";
}

MeasurementStatus parse_measurement_status(std::string_view text, std::string_view what) {
  if (text == "ok") return MeasurementStatus::kOk;
  if (text == "error") return MeasurementStatus::kError;
  throw InvalidInput(fmt::format("{}: status '{}' is not one of: ok, error", what, text));
}

std::string network_inputs_json(const graph::Network& network) {
  nlohmann::ordered_json inputs = nlohmann::ordered_json::array();
  for (std::size_t i : network.data_inputs()) {
    const graph::TensorInfo& t = network.tensor(i);
    inputs.push_back({{"name", t.name}, {"shape", t.shape}, {"dtype", graph::to_string(t.dtype)}});
  }
  return inputs.dump();
}

DatasetStore DatasetStore::open(const std::string& path, OpenMode mode, int busy_timeout_ms) {
  sqlite3* db = nullptr;
  const int flags =
      SQLITE_OPEN_URI | (mode == OpenMode::kReadOnly ? SQLITE_OPEN_READONLY
                                                     : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  const int rc = sqlite3_open_v2(path.c_str(), &db, flags, nullptr);
  // The store owns the handle from here, so every throw below closes it.
  DatasetStore store(db, path);
  if (rc != SQLITE_OK) throw_sqlite_error(db, rc, path, "opening it");
  sqlite3_extended_result_codes(db, 1);
  sqlite3_busy_timeout(db, busy_timeout_ms);
  execute_sql(db, "PRAGMA foreign_keys = ON", path);

  // Read the version before writing anything: a file of another version is left untouched.
  const int version = read_schema_version(db, path);
  if (version != 0) {
    check_schema_version(version, path);
    check_schema_tables(db, version, path);
  }
  store.schema_version_ = version == 0 ? kDatasetSchemaVersion : version;
  const bool read_only = sqlite3_db_readonly(db, "main") == 1;
  if (version == 0 && read_only) {
    throw InvalidInput(
        fmt::format("dataset '{}' is opened read-only but has no nnergy tables "
                    "(schema version 0; expected {})",
                    path, kDatasetSchemaVersion));
  }
  // WAL lets readers (export, a second campaign's resume query) run beside a writer; a
  // read-only connection cannot change the journal mode and does not need to.
  if (!read_only) execute_sql(db, "PRAGMA journal_mode = WAL", path);
  if (version == 0) create_schema(db, path);
  // An older file is read as it is, and migrated only when opened for writing.
  if (version != 0 && version < kDatasetSchemaVersion && !read_only) {
    migrate_schema(db, path);
    store.schema_version_ = kDatasetSchemaVersion;
  }
  return store;
}

DatasetStore::DatasetStore(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}

DatasetStore::DatasetStore(DatasetStore&& other) noexcept
    : db_(std::exchange(other.db_, nullptr)),
      path_(std::move(other.path_)),
      schema_version_(other.schema_version_) {}

DatasetStore& DatasetStore::operator=(DatasetStore&& other) noexcept {
  if (this != &other) {
    sqlite3_close_v2(db_);
    db_ = std::exchange(other.db_, nullptr);
    path_ = std::move(other.path_);
    schema_version_ = other.schema_version_;
  }
  return *this;
}

DatasetStore::~DatasetStore() { sqlite3_close_v2(db_); }

std::vector<std::pair<std::string, std::string>> DatasetStore::meta() const {
  SqliteStatement select(db_, "SELECT key, value FROM meta ORDER BY key", path_);
  std::vector<std::pair<std::string, std::string>> rows;
  while (select.step()) rows.emplace_back(select.column_text(0), select.column_text(1));
  return rows;
}

std::int64_t DatasetStore::add_device(const DeviceRecord& device) {
  SqliteTransaction transaction(db_, path_);
  SqliteStatement insert(db_,
                         "INSERT INTO devices (name, uuid, kind, driver_version) "
                         "VALUES (?1, ?2, ?3, ?4) ON CONFLICT (name, uuid) DO UPDATE SET "
                         "kind = excluded.kind, driver_version = excluded.driver_version "
                         "RETURNING id",
                         path_);
  insert.bind(1, std::string_view(device.name))
      .bind(2, std::string_view(device.uuid))
      .bind(3, std::string_view(device.kind))
      .bind(4, std::string_view(device.driver_version));
  insert.step();
  const std::int64_t id = insert.column_int(0);
  insert.run();
  transaction.commit();
  return id;
}

std::int64_t DatasetStore::start_session(const SessionRecord& session) {
  const std::string uuid = session.session_uuid.empty() ? new_session_uuid() : session.session_uuid;
  SqliteTransaction transaction(db_, path_);
  SqliteStatement insert(
      db_,
      "INSERT INTO sessions (session_uuid, device_id, tool_version, host, command_line, "
      "settings_json, started_utc, ended_utc) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) "
      "ON CONFLICT (session_uuid) DO NOTHING",
      path_);
  insert.bind(1, std::string_view(uuid))
      .bind(2, session.device_id)
      .bind(3, std::string_view(session.tool_version))
      .bind(4, std::string_view(session.host))
      .bind(5, std::string_view(session.command_line))
      .bind(6, std::string_view(session.settings_json))
      .bind(7,
            std::string_view(session.started_utc.empty() ? utc_now_iso8601() : session.started_utc))
      .bind(8, session.ended_utc);
  insert.run();
  const auto id = find_id(db_, path_, "SELECT id FROM sessions WHERE session_uuid = ?1", uuid);
  transaction.commit();
  return *id;
}

void DatasetStore::end_session(std::int64_t session_id, const std::string& ended_utc) {
  SqliteTransaction transaction(db_, path_);
  SqliteStatement update(db_, "UPDATE sessions SET ended_utc = ?1 WHERE id = ?2", path_);
  update.bind(1, std::string_view(ended_utc.empty() ? utc_now_iso8601() : ended_utc))
      .bind(2, session_id);
  update.run();
  if (sqlite3_changes(db_) != 1) {
    throw InternalError(fmt::format("dataset '{}' has no session {}", path_, session_id));
  }
  transaction.commit();
}

std::int64_t DatasetStore::add_op(const graph::OpDescriptor& op) {
  SqliteTransaction transaction(db_, path_);
  const std::int64_t id = insert_op(db_, path_, op);
  transaction.commit();
  return id;
}

std::int64_t DatasetStore::add_network(const graph::Network& network,
                                       const graph::Whitelist& whitelist) {
  NetworkRecord record;
  record.name = network.name;
  record.inputs_json = network_inputs_json(network);
  record.source = network.source;
  record.description = network.description;
  std::vector<graph::OpDescriptor> ops;
  for (const graph::UniqueOperation& op : graph::unique_operations(network, whitelist)) {
    ops.push_back(graph::describe_op(network, network.nodes()[op.nodes.front()], whitelist));
    record.op_counts.emplace_back(op.signature, static_cast<std::int64_t>(op.count()));
  }
  SqliteTransaction transaction(db_, path_);
  for (const graph::OpDescriptor& op : ops) insert_op(db_, path_, op);
  const std::int64_t id = insert_network(db_, path_, record);
  transaction.commit();
  return id;
}

std::int64_t DatasetStore::add_network(const NetworkRecord& network) {
  SqliteTransaction transaction(db_, path_);
  const std::int64_t id = insert_network(db_, path_, network);
  transaction.commit();
  return id;
}

std::int64_t DatasetStore::record_measurement(const MeasurementRecord& measurement) {
  check_mode(measurement.key.mode, fmt::format("measurement of '{}'", measurement.key.signature));
  SqliteTransaction transaction(db_, path_);
  const std::int64_t device_id = session_device(db_, path_, measurement.session_id);
  const auto op_id =
      find_id(db_, path_, "SELECT id FROM ops WHERE signature = ?1", measurement.key.signature);
  if (!op_id) {
    throw InternalError(fmt::format("dataset '{}': op '{}' is measured before it is stored", path_,
                                    measurement.key.signature));
  }
  SqliteStatement insert(
      db_,
      fmt::format("INSERT INTO measurements (device_id, session_id, op_id, mode, clock_mhz, "
                  "dtype, {}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, {}) "
                  "ON CONFLICT (device_id, op_id, mode, clock_mhz, dtype) DO UPDATE SET {} "
                  "RETURNING id",
                  kValueColumns, placeholders(7, kValueColumnCount), kValueUpdates),
      path_);
  insert.bind(1, device_id)
      .bind(2, measurement.session_id)
      .bind(3, *op_id)
      .bind(4, std::string_view(measurement.key.mode))
      .bind(5, measurement.key.clock_mhz)
      .bind(6, std::string_view(measurement.key.dtype));
  bind_values(insert, 7, measurement.values);
  insert.step();
  const std::int64_t id = insert.column_int(0);
  insert.run();
  transaction.commit();
  return id;
}

std::int64_t DatasetStore::record_network_measurement(const NetworkMeasurementRecord& measurement) {
  check_mode(measurement.mode,
             fmt::format("measurement of network '{}'", measurement.network_name));
  SqliteTransaction transaction(db_, path_);
  const std::int64_t device_id = session_device(db_, path_, measurement.session_id);
  SqliteStatement find(db_, "SELECT id FROM networks WHERE name = ?1 AND inputs_json = ?2", path_);
  find.bind(1, std::string_view(measurement.network_name))
      .bind(2, std::string_view(measurement.network_inputs_json));
  if (!find.step()) {
    throw InternalError(fmt::format("dataset '{}': network '{}' is measured before it is stored",
                                    path_, measurement.network_name));
  }
  const std::int64_t network_id = find.column_int(0);
  SqliteStatement insert(
      db_,
      fmt::format("INSERT INTO network_measurements (device_id, session_id, network_id, mode, "
                  "clock_mhz, dtype, {}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, {}) "
                  "ON CONFLICT (device_id, network_id, mode, clock_mhz, dtype) DO UPDATE SET {} "
                  "RETURNING id",
                  kValueColumns, placeholders(7, kValueColumnCount), kValueUpdates),
      path_);
  insert.bind(1, device_id)
      .bind(2, measurement.session_id)
      .bind(3, network_id)
      .bind(4, std::string_view(measurement.mode))
      .bind(5, measurement.clock_mhz)
      .bind(6, std::string_view(measurement.dtype));
  bind_values(insert, 7, measurement.values);
  insert.step();
  const std::int64_t id = insert.column_int(0);
  insert.run();
  transaction.commit();
  return id;
}

bool DatasetStore::is_measured(std::int64_t device_id, const MeasurementKey& key) const {
  SqliteStatement find(db_,
                       "SELECT 1 FROM measurements m JOIN ops o ON o.id = m.op_id "
                       "WHERE m.device_id = ?1 AND o.signature = ?2 AND m.mode = ?3 "
                       "AND m.clock_mhz = ?4 AND m.dtype = ?5 AND m.status = 'ok'",
                       path_);
  find.bind(1, device_id)
      .bind(2, std::string_view(key.signature))
      .bind(3, std::string_view(key.mode))
      .bind(4, key.clock_mhz)
      .bind(5, std::string_view(key.dtype));
  return find.step();
}

std::vector<DeviceRecord> DatasetStore::devices() const {
  SqliteStatement select(
      db_, "SELECT id, name, uuid, kind, driver_version FROM devices ORDER BY id", path_);
  std::vector<DeviceRecord> rows;
  while (select.step()) {
    rows.push_back({select.column_int(0), select.column_text(1), select.column_text(2),
                    select.column_text(3), select.column_text(4)});
  }
  return rows;
}

std::vector<SessionRecord> DatasetStore::sessions() const {
  SqliteStatement select(db_,
                         "SELECT id, session_uuid, device_id, tool_version, host, command_line, "
                         "settings_json, started_utc, ended_utc FROM sessions ORDER BY id",
                         path_);
  std::vector<SessionRecord> rows;
  while (select.step()) {
    SessionRecord s;
    s.id = select.column_int(0);
    s.session_uuid = select.column_text(1);
    s.device_id = select.column_int(2);
    s.tool_version = select.column_text(3);
    s.host = select.column_text(4);
    s.command_line = select.column_text(5);
    s.settings_json = select.column_text(6);
    s.started_utc = select.column_text(7);
    s.ended_utc = select.column_optional_text(8);
    rows.push_back(std::move(s));
  }
  return rows;
}

std::vector<OpRecord> DatasetStore::ops() const {
  SqliteStatement select(
      db_, fmt::format("SELECT id, {} FROM ops ORDER BY id", op_columns(schema_version_)), path_);
  std::vector<OpRecord> rows;
  while (select.step()) rows.push_back(read_op(select, path_));
  return rows;
}

std::optional<OpRecord> DatasetStore::find_op(const std::string& signature) const {
  SqliteStatement select(
      db_, fmt::format("SELECT id, {} FROM ops WHERE signature = ?1", op_columns(schema_version_)),
      path_);
  select.bind(1, std::string_view(signature));
  if (!select.step()) return std::nullopt;
  return read_op(select, path_);
}

std::vector<MeasurementRecord> DatasetStore::measurements() const {
  SqliteStatement select(
      db_,
      fmt::format("SELECT m.id, m.session_id, m.device_id, o.signature, m.mode, m.clock_mhz, "
                  "m.dtype, {} FROM measurements m JOIN ops o ON o.id = m.op_id ORDER BY m.id",
                  kValueColumns),
      path_);
  std::vector<MeasurementRecord> rows;
  while (select.step()) {
    MeasurementRecord m;
    m.id = select.column_int(0);
    m.session_id = select.column_int(1);
    m.device_id = select.column_int(2);
    m.key = {select.column_text(3), select.column_text(4), select.column_int(5),
             select.column_text(6)};
    m.values = read_values(select, 7, path_);
    rows.push_back(std::move(m));
  }
  return rows;
}

std::vector<NetworkRecord> DatasetStore::networks() const {
  SqliteStatement select(
      db_, "SELECT id, name, inputs_json, source, description FROM networks ORDER BY id", path_);
  SqliteStatement counts(db_,
                         "SELECT o.signature, n.count FROM network_ops n JOIN ops o "
                         "ON o.id = n.op_id WHERE n.network_id = ?1 ORDER BY o.id",
                         path_);
  std::vector<NetworkRecord> rows;
  while (select.step()) {
    NetworkRecord n;
    n.id = select.column_int(0);
    n.name = select.column_text(1);
    n.inputs_json = select.column_text(2);
    n.source = select.column_text(3);
    n.description = select.column_text(4);
    counts.bind(1, n.id);
    while (counts.step()) n.op_counts.emplace_back(counts.column_text(0), counts.column_int(1));
    counts.reset();
    rows.push_back(std::move(n));
  }
  return rows;
}

std::vector<NetworkMeasurementRecord> DatasetStore::network_measurements() const {
  SqliteStatement select(
      db_,
      fmt::format("SELECT m.id, m.session_id, m.device_id, n.name, n.inputs_json, m.mode, "
                  "m.clock_mhz, m.dtype, {} FROM network_measurements m JOIN networks n "
                  "ON n.id = m.network_id ORDER BY m.id",
                  kValueColumns),
      path_);
  std::vector<NetworkMeasurementRecord> rows;
  while (select.step()) {
    NetworkMeasurementRecord m;
    m.id = select.column_int(0);
    m.session_id = select.column_int(1);
    m.device_id = select.column_int(2);
    m.network_name = select.column_text(3);
    m.network_inputs_json = select.column_text(4);
    m.mode = select.column_text(5);
    m.clock_mhz = select.column_int(6);
    m.dtype = select.column_text(7);
    m.values = read_values(select, 8, path_);
    rows.push_back(std::move(m));
  }
  return rows;
}

}  // namespace nnergy::dataset
