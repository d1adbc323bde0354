#include "nnergy/dataset/dataset_schema.h"

#include <fmt/format.h>
#include <sqlite3.h>

#include <algorithm>
#include <array>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "nnergy/core/error.h"
#include "nnergy/core/version.h"
#include "nnergy/dataset/dataset_time.h"
#include "nnergy/dataset/sqlite_statement.h"

namespace nnergy::dataset {

namespace {

// Keys are natural keys (uuid, signature, name + inputs) so that files written on different
// machines can be merged without id clashes; integer ids are local to one file.
constexpr std::string_view kDdl = R"sql(
CREATE TABLE meta (
  key TEXT PRIMARY KEY,
  value TEXT NOT NULL
);
CREATE TABLE devices (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  uuid TEXT NOT NULL,
  kind TEXT NOT NULL,
  driver_version TEXT NOT NULL,
  UNIQUE (name, uuid)
);
CREATE TABLE sessions (
  id INTEGER PRIMARY KEY,
  session_uuid TEXT NOT NULL UNIQUE,
  device_id INTEGER NOT NULL REFERENCES devices(id),
  tool_version TEXT NOT NULL,
  host TEXT NOT NULL,
  command_line TEXT NOT NULL,
  settings_json TEXT NOT NULL,
  started_utc TEXT NOT NULL,
  ended_utc TEXT
);
CREATE TABLE ops (
  id INTEGER PRIMARY KEY,
  signature TEXT NOT NULL UNIQUE,
  op_type TEXT NOT NULL,
  op_class TEXT NOT NULL,
  dtype TEXT NOT NULL,
  input_shapes_json TEXT NOT NULL,
  attributes_json TEXT NOT NULL,
  whitelisted INTEGER NOT NULL,
  known INTEGER NOT NULL,
  parameter_count INTEGER NOT NULL,
  inference_mac_count REAL NOT NULL,
  inference_flop_count REAL NOT NULL,
  inference_byte_count REAL NOT NULL,
  inference_kernel_count REAL NOT NULL,
  training_forward_mac_count REAL NOT NULL,
  training_forward_flop_count REAL NOT NULL,
  training_forward_byte_count REAL NOT NULL,
  training_forward_kernel_count REAL NOT NULL,
  backward_mac_count REAL NOT NULL,
  backward_flop_count REAL NOT NULL,
  backward_byte_count REAL NOT NULL,
  backward_kernel_count REAL NOT NULL
);
CREATE TABLE measurements (
  id INTEGER PRIMARY KEY,
  device_id INTEGER NOT NULL REFERENCES devices(id),
  session_id INTEGER NOT NULL REFERENCES sessions(id),
  op_id INTEGER NOT NULL REFERENCES ops(id),
  mode TEXT NOT NULL CHECK (mode IN ('inference', 'training')),
  clock_mhz INTEGER NOT NULL,
  dtype TEXT NOT NULL,
  iterations INTEGER NOT NULL,
  repeats INTEGER NOT NULL,
  time_s REAL,
  time_std_s REAL,
  power_w REAL,
  power_std_w REAL,
  energy_j REAL,
  energy_std_j REAL,
  samples_kept INTEGER NOT NULL,
  samples_dropped INTEGER NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('ok', 'error')),
  message TEXT NOT NULL,
  measured_utc TEXT NOT NULL,
  UNIQUE (device_id, op_id, mode, clock_mhz, dtype)
);
CREATE TABLE networks (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  inputs_json TEXT NOT NULL,
  source TEXT NOT NULL,
  description TEXT NOT NULL,
  UNIQUE (name, inputs_json)
);
CREATE TABLE network_ops (
  network_id INTEGER NOT NULL REFERENCES networks(id),
  op_id INTEGER NOT NULL REFERENCES ops(id),
  count INTEGER NOT NULL,
  PRIMARY KEY (network_id, op_id)
);
CREATE TABLE network_measurements (
  id INTEGER PRIMARY KEY,
  device_id INTEGER NOT NULL REFERENCES devices(id),
  session_id INTEGER NOT NULL REFERENCES sessions(id),
  network_id INTEGER NOT NULL REFERENCES networks(id),
  mode TEXT NOT NULL CHECK (mode IN ('inference', 'training')),
  clock_mhz INTEGER NOT NULL,
  dtype TEXT NOT NULL,
  iterations INTEGER NOT NULL,
  repeats INTEGER NOT NULL,
  time_s REAL,
  time_std_s REAL,
  power_w REAL,
  power_std_w REAL,
  energy_j REAL,
  energy_std_j REAL,
  samples_kept INTEGER NOT NULL,
  samples_dropped INTEGER NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('ok', 'error')),
  message TEXT NOT NULL,
  measured_utc TEXT NOT NULL,
  UNIQUE (device_id, network_id, mode, clock_mhz, dtype)
);
CREATE INDEX measurements_by_session ON measurements(session_id);
CREATE INDEX network_measurements_by_session ON network_measurements(session_id);
)sql";

// Added in schema version 2. Published measurements keep the ids of the file they came from
// (data/calibration/measured_public.json), so the id is the key and a re-import adds nothing.
// `value` is in `unit` exactly as published; `value_si` in `unit_si`.
constexpr std::string_view kPublishedDdl = R"sql(
CREATE TABLE published_measurements (
  id TEXT PRIMARY KEY,
  source TEXT NOT NULL,
  location TEXT NOT NULL,
  gpu TEXT NOT NULL,
  network TEXT NOT NULL,
  mode TEXT NOT NULL,
  batch INTEGER,
  input_shape TEXT,
  precision TEXT,
  framework TEXT NOT NULL,
  clock_mhz INTEGER,
  quantity TEXT NOT NULL,
  value REAL NOT NULL,
  unit TEXT NOT NULL,
  value_si REAL,
  unit_si TEXT NOT NULL,
  measured INTEGER NOT NULL CHECK (measured = 1),
  derivation TEXT NOT NULL,
  grade TEXT NOT NULL CHECK (grade IN ('A', 'B', 'C')),
  notes TEXT NOT NULL,
  n_samples INTEGER,
  median_ms REAL,
  stdev_ms REAL,
  layer TEXT,
  imported_utc TEXT NOT NULL
);
CREATE INDEX published_measurements_by_gpu ON published_measurements(gpu, quantity);
)sql";

// The column names of `table` in the database open on `db`, in order; empty when there is no such
// table. This is the first statement that makes SQLite read the file's schema, so a schema it
// cannot read (a newer file format, a damaged sqlite_schema row) surfaces here as SQLITE_ERROR,
// or as SQLITE_NOMEM for a damaged row that claims an impossible size (found by fuzz/dataset):
// InvalidInput naming `path`, not an error of nnergy's own SQL.
std::vector<std::string> table_columns(sqlite3* db, const std::string& table,
                                       const std::string& path) {
  sqlite3_stmt* raw = nullptr;
  int rc = sqlite3_prepare_v2(db, "SELECT name FROM pragma_table_info(?1)", -1, &raw, nullptr);
  const std::unique_ptr<sqlite3_stmt, int (*)(sqlite3_stmt*)> statement(raw, sqlite3_finalize);
  auto fail = [&](int code) {
    if ((code & 0xff) == SQLITE_ERROR || (code & 0xff) == SQLITE_NOMEM) {
      throw InvalidInput(fmt::format(
          "dataset '{}' is not a readable nnergy dataset: SQLite cannot read its schema ({})", path,
          sqlite3_errmsg(db)));
    }
    throw_sqlite_error(db, code, path, "reading its schema");
  };
  if (rc != SQLITE_OK) fail(rc);
  sqlite3_bind_text(statement.get(), 1, table.c_str(), -1, SQLITE_TRANSIENT);
  std::vector<std::string> columns;
  while ((rc = sqlite3_step(statement.get())) == SQLITE_ROW) {
    const unsigned char* name = sqlite3_column_text(statement.get(), 0);
    columns.emplace_back(name != nullptr ? reinterpret_cast<const char*>(name) : "");
  }
  if (rc != SQLITE_DONE) fail(rc);
  return columns;
}

// Table -> columns of the schema `ddl` creates, read back from an in-memory database.
std::map<std::string, std::vector<std::string>> tables_of(std::string_view ddl) {
  sqlite3* raw = nullptr;
  const int rc = sqlite3_open_v2(":memory:", &raw, SQLITE_OPEN_READWRITE, nullptr);
  const std::unique_ptr<sqlite3, int (*)(sqlite3*)> db(raw, sqlite3_close_v2);
  if (rc != SQLITE_OK) throw_sqlite_error(db.get(), rc, ":memory:", "opening it");
  execute_sql(db.get(), ddl, ":memory:");
  std::map<std::string, std::vector<std::string>> tables;
  SqliteStatement names(db.get(), "SELECT name FROM sqlite_schema WHERE type = 'table'",
                        ":memory:");
  while (names.step()) tables[names.column_text(0)] = {};
  for (auto& [table, columns] : tables) columns = table_columns(db.get(), table, ":memory:");
  return tables;
}

int table_count(sqlite3* db, const std::string& path) {
  SqliteStatement count(db, "SELECT count(*) FROM sqlite_schema WHERE type = 'table'", path);
  count.step();
  return static_cast<int>(count.column_int(0));
}

// Writes (or overwrites) `rows` in the meta table, stamps the schema version and commits the
// transaction the caller began.
void write_meta_and_commit(sqlite3* db, const std::string& path,
                           const std::vector<std::pair<std::string, std::string>>& rows) {
  SqliteStatement meta(db,
                       "INSERT INTO meta (key, value) VALUES (?1, ?2) ON CONFLICT (key) "
                       "DO UPDATE SET value = excluded.value",
                       path);
  for (const auto& [key, value] : rows) {
    meta.bind(1, std::string_view(key)).bind(2, std::string_view(value));
    meta.run();
    meta.reset();
  }
  execute_sql(db, fmt::format("PRAGMA user_version = {}", kDatasetSchemaVersion), path);
  execute_sql(db, "COMMIT", path);
}

}  // namespace

std::string ops_byte_count_column(std::string_view pass, int version) {
  return fmt::format("{}_{}", pass, version < 3 ? "bytes" : "byte_count");
}

std::string_view dataset_schema_ddl() {
  static const std::string ddl = std::string(kDdl) + std::string(kPublishedDdl);
  return ddl;
}

int read_schema_version(sqlite3* db, const std::string& path) {
  SqliteStatement version(db, "PRAGMA user_version", path);
  version.step();
  return static_cast<int>(version.column_int(0));
}

void check_schema_version(int found_version, const std::string& path) {
  if (found_version >= kOldestReadableSchemaVersion && found_version <= kDatasetSchemaVersion) {
    return;
  }
  throw InvalidInput(fmt::format(
      "dataset '{}' has schema version {}, but this nnergy reads schema version {} (and the older "
      "versions from {}) only; files of other versions are never migrated: re-create the "
      "dataset or use the nnergy version that wrote it (docs/dataset.md)",
      path, found_version, kDatasetSchemaVersion, kOldestReadableSchemaVersion));
}

void check_schema_tables(sqlite3* db, int version, const std::string& path) {
  static const auto versions = [] {
    std::array<std::map<std::string, std::vector<std::string>>, kDatasetSchemaVersion + 1> v;
    for (int older = kOldestReadableSchemaVersion; older <= kDatasetSchemaVersion; ++older) {
      auto& tables = v[static_cast<std::size_t>(older)];
      tables = tables_of(dataset_schema_ddl());
      if (older < 2) tables.erase("published_measurements");
      for (const char* pass : kOpPasses) {
        std::ranges::replace(tables["ops"], ops_byte_count_column(pass, kDatasetSchemaVersion),
                             ops_byte_count_column(pass, older));
      }
    }
    return v;
  }();
  const auto& expected = versions.at(static_cast<std::size_t>(version));
  for (const auto& [table, columns] : expected) {
    const std::vector<std::string> found = table_columns(db, table, path);
    if (found.empty()) {
      throw InvalidInput(fmt::format(
          "dataset '{}' has schema version {} but no table '{}': not an nnergy dataset, or one "
          "changed outside nnergy",
          path, version, table));
    }
    for (const std::string& column : columns) {
      if (std::find(found.begin(), found.end(), column) == found.end()) {
        throw InvalidInput(fmt::format(
            "dataset '{}' has schema version {} but its table '{}' has no column '{}': not an "
            "nnergy dataset, or one changed outside nnergy",
            path, version, table, column));
      }
    }
  }
  // nnergy's schema has tables and indexes only: a view (in place of a table: reading it can run
  // any query, e.g. one that never ends) or a trigger (code run on every write) is refused.
  {
    SqliteStatement objects(
        db, "SELECT type, name FROM sqlite_schema WHERE type NOT IN ('table', 'index')", path);
    if (objects.step()) {
      throw InvalidInput(fmt::format(
          "dataset '{}' holds a {} '{}', which nnergy datasets never do: not an nnergy dataset, "
          "or one changed outside nnergy (remove it, or export the measurements and import them "
          "into a new dataset)",
          path, objects.column_text(0), objects.column_text(1)));
    }
  }
}

void create_schema(sqlite3* db, const std::string& path) {
  // IMMEDIATE takes the write lock before looking, so two processes creating the same new file
  // cannot both create the tables.
  execute_sql(db, "BEGIN IMMEDIATE", path);
  try {
    const int version = read_schema_version(db, path);
    if (version != 0) {
      execute_sql(db, "ROLLBACK", path);
      check_schema_version(version, path);
      return;
    }
    if (table_count(db, path) != 0) {
      throw InvalidInput(fmt::format(
          "'{}' is a SQLite database with other tables and schema version 0, not an nnergy "
          "dataset (expected schema version {} or an empty file)",
          path, kDatasetSchemaVersion));
    }
    execute_sql(db, dataset_schema_ddl(), path);
    write_meta_and_commit(db, path,
                          {{"schema_version", std::to_string(kDatasetSchemaVersion)},
                           {"created_by", "nnergy"},
                           {"created_tool_version", kToolVersion},
                           {"created_utc", utc_now_iso8601()}});
  } catch (...) {
    if (sqlite3_get_autocommit(db) == 0) sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr);
    throw;
  }
}

void migrate_schema(sqlite3* db, const std::string& path) {
  execute_sql(db, "BEGIN IMMEDIATE", path);
  try {
    // Read again under the write lock: another process may have migrated the file meanwhile.
    const int version = read_schema_version(db, path);
    if (version == kDatasetSchemaVersion) {
      execute_sql(db, "ROLLBACK", path);
      return;
    }
    if (version < kOldestReadableSchemaVersion || version > kDatasetSchemaVersion) {
      throw InternalError(
          fmt::format("dataset '{}': no migration from schema version {}", path, version));
    }
    // 1 -> 2 only adds the published_measurements table: every version-1 row stays as it was.
    if (version < 2) execute_sql(db, kPublishedDdl, path);
    // 2 -> 3 renames the byte counts of table ops as every other count; no value changes.
    if (version < 3) {
      for (const char* pass : kOpPasses) {
        execute_sql(db,
                    fmt::format("ALTER TABLE ops RENAME COLUMN {} TO {}",
                                ops_byte_count_column(pass, version),
                                ops_byte_count_column(pass, kDatasetSchemaVersion)),
                    path);
      }
    }
    write_meta_and_commit(db, path,
                          {{"schema_version", std::to_string(kDatasetSchemaVersion)},
                           {"migrated_from_schema_version", std::to_string(version)},
                           {"migrated_tool_version", kToolVersion},
                           {"migrated_utc", utc_now_iso8601()}});
  } catch (...) {
    if (sqlite3_get_autocommit(db) == 0) sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr);
    throw;
  }
}

}  // namespace nnergy::dataset
