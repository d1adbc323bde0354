#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace nnergy::dataset {

/// Throws the nnergy exception for SQLite result code `rc` on `db`, whose file is `path`.
/// A locked, busy or read-only file, a file that is not a database or a full disk is the user's
/// file problem (InvalidInput naming the file); anything else means nnergy misused SQLite
/// (InternalError). `what` names the operation, e.g. "writing a measurement".
[[noreturn]] void throw_sqlite_error(sqlite3* db, int rc, const std::string& path,
                                     std::string_view what);

/// One prepared statement, finalized on destruction.
///
/// Every store, merge and export query goes through this one wrapper so that finalization,
/// binding by 1-based index, NULL handling for optional values and the mapping of SQLite errors
/// to nnergy exceptions are written once instead of at each call site. Not thread-safe: use it
/// from the thread that owns the connection.
class SqliteStatement {
 public:
  /// Prepares `sql` on `db`; `path` names the database file in error messages.
  SqliteStatement(sqlite3* db, std::string_view sql, std::string path);
  ~SqliteStatement();
  SqliteStatement(const SqliteStatement&) = delete;
  SqliteStatement& operator=(const SqliteStatement&) = delete;

  /// Binds parameter `index` (1-based); std::nullopt binds NULL. Returns *this for chaining.
  SqliteStatement& bind(int index, std::int64_t value);
  SqliteStatement& bind(int index, double value);
  SqliteStatement& bind(int index, std::string_view value);
  SqliteStatement& bind(int index, const std::optional<double>& value);
  SqliteStatement& bind(int index, const std::optional<std::int64_t>& value);
  SqliteStatement& bind(int index, const std::optional<std::string>& value);

  /// Advances to the next row; false when the statement is done. Throws on error.
  bool step();
  /// Runs a statement that returns no rows (or whose rows are not needed).
  void run();
  /// Resets the statement and clears its bindings so it can run again.
  void reset();

  /// Column values of the current row (0-based).
  std::int64_t column_int(int column) const;
  double column_double(int column) const;
  std::string column_text(int column) const;
  std::optional<double> column_optional_double(int column) const;
  std::optional<std::int64_t> column_optional_int(int column) const;
  std::optional<std::string> column_optional_text(int column) const;
  bool column_is_null(int column) const;
  /// SQLITE_INTEGER, SQLITE_FLOAT, SQLITE_TEXT, SQLITE_BLOB or SQLITE_NULL.
  int column_type(int column) const;

 private:
  sqlite3* db_;
  sqlite3_stmt* statement_ = nullptr;
  std::string path_;
};

/// One write transaction (BEGIN IMMEDIATE), rolled back on destruction unless committed, so an
/// exception between two writes of one measurement leaves the file as it was. IMMEDIATE takes
/// the write lock up front: a lock held by another process shows here, not halfway through.
/// Inside an open transaction it nests as a SAVEPOINT, so a merge can wrap many store writes in
/// one all-or-nothing transaction.
class SqliteTransaction {
 public:
  SqliteTransaction(sqlite3* db, std::string path);
  ~SqliteTransaction();
  SqliteTransaction(const SqliteTransaction&) = delete;
  SqliteTransaction& operator=(const SqliteTransaction&) = delete;

  void commit();

 private:
  sqlite3* db_;
  std::string path_;
  bool open_ = false;
  bool nested_ = false;
};

/// Runs `sql` (one or more statements without parameters) on `db`; throws like SqliteStatement.
void execute_sql(sqlite3* db, std::string_view sql, const std::string& path);

}  // namespace nnergy::dataset
