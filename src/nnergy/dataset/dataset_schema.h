#pragma once

#include <string>
#include <string_view>

struct sqlite3;

namespace nnergy::dataset {

/// Version of the dataset's table layout, stored in `PRAGMA user_version` and in the `meta`
/// table. Bumped on any change of a table or column (docs/dataset.md, "Versioning").
/// Version 2 added the `published_measurements` table; version 3 renamed table ops' byte counts
/// `{pass}_bytes` to `{pass}_byte_count`, as every other count.
inline constexpr int kDatasetSchemaVersion = 3;

/// The oldest version nnergy still opens. Files from kOldestReadableSchemaVersion up to
/// kDatasetSchemaVersion are read as they are; opened for writing, an older file is migrated by
/// migrate_schema (recorded in its `meta` table). Any other version is refused untouched.
inline constexpr int kOldestReadableSchemaVersion = 1;

/// The passes whose counts table ops holds, in column order.
inline constexpr const char* kOpPasses[] = {"inference", "training_forward", "backward"};

/// The name of the byte-count column of `pass` (one of kOpPasses) in table ops of a file of
/// schema `version`: `{pass}_bytes` before version 3, `{pass}_byte_count` from version 3.
std::string ops_byte_count_column(std::string_view pass, int version);

/// The CREATE TABLE / CREATE INDEX statements of schema version kDatasetSchemaVersion.
std::string_view dataset_schema_ddl();

/// The schema version stored in the file open on `db` (0 for a file nnergy did not create).
/// `path` names the file in error messages. Not thread-safe.
int read_schema_version(sqlite3* db, const std::string& path);

/// Creates the tables in the empty database `db` and records the schema version, the tool version
/// and the creation date, all in one transaction. When another process created them first, only
/// checks the version. Throws InvalidInput naming `path` when the file holds other tables.
void create_schema(sqlite3* db, const std::string& path);

/// Throws InvalidInput naming `path`, `found_version` and the readable versions unless
/// kOldestReadableSchemaVersion <= `found_version` <= kDatasetSchemaVersion.
void check_schema_version(int found_version, const std::string& path);

/// Throws InvalidInput naming `path` unless the file open on `db`, of the readable schema version
/// `version`, has every table and column of that version, and SQLite can read its schema: a file
/// whose version stamp says nnergy but whose tables were dropped or changed is refused when it is
/// opened, not with an internal error at its first query. Extra tables and columns are allowed.
void check_schema_tables(sqlite3* db, int version, const std::string& path);

/// Brings the file open on `db`, of a readable version older than kDatasetSchemaVersion, to
/// kDatasetSchemaVersion in one transaction: 1 -> 2 creates `published_measurements`, 2 -> 3
/// renames table ops' `{pass}_bytes` columns to `{pass}_byte_count`; neither changes a value.
/// Records `migrated_from_schema_version`, `migrated_tool_version` and `migrated_utc` in `meta`. A
/// file migrated meanwhile by another process is left as it is. Not thread-safe.
void migrate_schema(sqlite3* db, const std::string& path);

}  // namespace nnergy::dataset
