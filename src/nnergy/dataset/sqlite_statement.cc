#include "nnergy/dataset/sqlite_statement.h"

#include <fmt/format.h>

#include <filesystem>

#include "nnergy/core/error.h"

namespace nnergy::dataset {

void throw_sqlite_error(sqlite3* db, int rc, const std::string& path, std::string_view what) {
  const std::string detail = db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
  switch (rc & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      throw InvalidInput(fmt::format(
          "dataset '{}' is locked while {}: another process holds it (wait for it to finish or "
          "use another dataset file); SQLite: {}",
          path, what, detail));
    case SQLITE_READONLY:
      throw InvalidInput(fmt::format(
          "dataset '{}' is read-only while {}: expected a writable file and directory; SQLite: {}",
          path, what, detail));
    case SQLITE_CANTOPEN:
      throw InvalidInput(
          fmt::format("cannot open dataset '{}' while {}: expected an existing or creatable file; "
                      "SQLite: {}",
                      path, what, detail));
    case SQLITE_NOMEM:
      // On reading, a damaged row that claims an impossible size (found by fuzz/dataset), far
      // more often than a machine out of memory: the file's problem either way, not nnergy's.
      throw InvalidInput(fmt::format(
          "dataset '{}': SQLite ran out of memory while {}: the file is probably damaged (a row "
          "claiming an impossible size; `sqlite3 FILE 'PRAGMA integrity_check'` tells), or the "
          "machine is short of memory; SQLite: {}",
          path, what, detail));
    case SQLITE_NOTADB:
    case SQLITE_CORRUPT:
      throw InvalidInput(
          fmt::format("dataset '{}' is not a valid SQLite database (found while {}); SQLite: {}",
                      path, what, detail));
    case SQLITE_FULL:
    case SQLITE_IOERR:
    case SQLITE_PERM: {
      // The usual I/O error on a healthy disk: a dataset file deleted or replaced while its
      // write-ahead log stayed, which SQLite then refuses to apply to the new file.
      std::error_code ignored;
      const bool stale_log = (rc & 0xff) == SQLITE_IOERR &&
                             std::filesystem::exists(path + "-wal", ignored) &&
                             std::filesystem::exists(path + "-shm", ignored);
      throw InvalidInput(fmt::format(
          "dataset '{}' could not be written while {}; SQLite: {}{}", path, what, detail,
          stale_log ? fmt::format(" (if '{0}' was deleted or replaced while '{0}-wal' and "
                                  "'{0}-shm' stayed, they belong to the old file: remove them)",
                                  path)
                    : ""));
    }
    default:
      throw InternalError(fmt::format("SQLite error on dataset '{}' while {}: {} (code {})", path,
                                      what, detail, rc));
  }
}

SqliteStatement::SqliteStatement(sqlite3* db, std::string_view sql, std::string path)
    : db_(db), path_(std::move(path)) {
  const int rc =
      sqlite3_prepare_v2(db_, sql.data(), static_cast<int>(sql.size()), &statement_, nullptr);
  if (rc != SQLITE_OK) throw_sqlite_error(db_, rc, path_, fmt::format("preparing '{}'", sql));
}

SqliteStatement::~SqliteStatement() { sqlite3_finalize(statement_); }

SqliteStatement& SqliteStatement::bind(int index, std::int64_t value) {
  const int rc = sqlite3_bind_int64(statement_, index, value);
  if (rc != SQLITE_OK) throw_sqlite_error(db_, rc, path_, "binding a parameter");
  return *this;
}

SqliteStatement& SqliteStatement::bind(int index, double value) {
  const int rc = sqlite3_bind_double(statement_, index, value);
  if (rc != SQLITE_OK) throw_sqlite_error(db_, rc, path_, "binding a parameter");
  return *this;
}

SqliteStatement& SqliteStatement::bind(int index, std::string_view value) {
  // SQLITE_TRANSIENT: SQLite copies the text, so temporaries may be bound safely.
  const int rc = sqlite3_bind_text(statement_, index, value.data(), static_cast<int>(value.size()),
                                   SQLITE_TRANSIENT);
  if (rc != SQLITE_OK) throw_sqlite_error(db_, rc, path_, "binding a parameter");
  return *this;
}

SqliteStatement& SqliteStatement::bind(int index, const std::optional<double>& value) {
  if (value) return bind(index, *value);
  const int rc = sqlite3_bind_null(statement_, index);
  if (rc != SQLITE_OK) throw_sqlite_error(db_, rc, path_, "binding a parameter");
  return *this;
}

SqliteStatement& SqliteStatement::bind(int index, const std::optional<std::int64_t>& value) {
  if (value) return bind(index, *value);
  const int rc = sqlite3_bind_null(statement_, index);
  if (rc != SQLITE_OK) throw_sqlite_error(db_, rc, path_, "binding a parameter");
  return *this;
}

SqliteStatement& SqliteStatement::bind(int index, const std::optional<std::string>& value) {
  if (value) return bind(index, std::string_view(*value));
  const int rc = sqlite3_bind_null(statement_, index);
  if (rc != SQLITE_OK) throw_sqlite_error(db_, rc, path_, "binding a parameter");
  return *this;
}

bool SqliteStatement::step() {
  const int rc = sqlite3_step(statement_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  throw_sqlite_error(db_, rc, path_, fmt::format("running '{}'", sqlite3_sql(statement_)));
}

void SqliteStatement::run() {
  while (step()) {
  }
}

void SqliteStatement::reset() {
  sqlite3_reset(statement_);
  sqlite3_clear_bindings(statement_);
}

std::int64_t SqliteStatement::column_int(int column) const {
  return sqlite3_column_int64(statement_, column);
}

double SqliteStatement::column_double(int column) const {
  return sqlite3_column_double(statement_, column);
}

std::string SqliteStatement::column_text(int column) const {
  const unsigned char* text = sqlite3_column_text(statement_, column);
  if (text == nullptr) return {};
  return {reinterpret_cast<const char*>(text),
          static_cast<std::size_t>(sqlite3_column_bytes(statement_, column))};
}

std::optional<double> SqliteStatement::column_optional_double(int column) const {
  if (column_is_null(column)) return std::nullopt;
  return column_double(column);
}

std::optional<std::int64_t> SqliteStatement::column_optional_int(int column) const {
  if (column_is_null(column)) return std::nullopt;
  return column_int(column);
}

std::optional<std::string> SqliteStatement::column_optional_text(int column) const {
  if (column_is_null(column)) return std::nullopt;
  return column_text(column);
}

bool SqliteStatement::column_is_null(int column) const {
  return sqlite3_column_type(statement_, column) == SQLITE_NULL;
}

int SqliteStatement::column_type(int column) const {
  return sqlite3_column_type(statement_, column);
}

void execute_sql(sqlite3* db, std::string_view sql, const std::string& path) {
  const std::string text(sql);
  char* error = nullptr;
  const int rc = sqlite3_exec(db, text.c_str(), nullptr, nullptr, &error);
  if (rc != SQLITE_OK) {
    sqlite3_free(error);
    throw_sqlite_error(db, rc, path, fmt::format("running '{}'", text.substr(0, 60)));
  }
}

SqliteTransaction::SqliteTransaction(sqlite3* db, std::string path)
    : db_(db), path_(std::move(path)) {
  nested_ = sqlite3_get_autocommit(db_) == 0;
  execute_sql(db_, nested_ ? "SAVEPOINT nnergy_write" : "BEGIN IMMEDIATE", path_);
  open_ = true;
}

SqliteTransaction::~SqliteTransaction() {
  if (!open_) return;
  const char* undo = nested_ ? "ROLLBACK TO nnergy_write; RELEASE nnergy_write" : "ROLLBACK";
  sqlite3_exec(db_, undo, nullptr, nullptr, nullptr);
}

void SqliteTransaction::commit() {
  execute_sql(db_, nested_ ? "RELEASE nnergy_write" : "COMMIT", path_);
  open_ = false;
}

}  // namespace nnergy::dataset
