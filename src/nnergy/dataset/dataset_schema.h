#pragma once

#include <string>
#include <string_view>

struct sqlite3;

namespace nnergy::dataset {

/// Version of the dataset's table layout, stored in `PRAGMA user_version` and in the `meta`
/// table. Bumped on any change of a table or column; nnergy opens only files of exactly this
/// version and never migrates one silently (docs/dataset.md).
inline constexpr int kDatasetSchemaVersion = 1;

/// The CREATE TABLE / CREATE INDEX statements of schema version kDatasetSchemaVersion.
std::string_view dataset_schema_ddl();

/// The schema version stored in the file open on `db` (0 for a file nnergy did not create).
/// `path` names the file in error messages. Not thread-safe.
int read_schema_version(sqlite3* db, const std::string& path);

/// Creates the tables in the empty database `db` and records the schema version, the tool version
/// and the creation date, all in one transaction. When another process created them first, only
/// checks the version. Throws InvalidInput naming `path` when the file holds other tables.
void create_schema(sqlite3* db, const std::string& path);

/// Throws InvalidInput naming `path`, `found_version` and kDatasetSchemaVersion unless they
/// are equal.
void check_schema_version(int found_version, const std::string& path);

}  // namespace nnergy::dataset
