// DatasetStore's table of published measurements (schema version 2), and the file import.
#include <fmt/format.h>

#include "nnergy/core/error.h"
#include "nnergy/dataset/dataset_store.h"
#include "nnergy/dataset/dataset_time.h"
#include "nnergy/dataset/published_import.h"
#include "nnergy/dataset/sqlite_statement.h"

namespace nnergy::dataset {

namespace {

// The stored columns of a PublishedMeasurement, in the order bind_published and read_published
// use; imported_utc follows them.
constexpr std::string_view kPublishedColumns =
    "id, source, location, gpu, network, mode, batch, input_shape, precision, framework, "
    "clock_mhz, quantity, value, unit, value_si, unit_si, measured, derivation, grade, notes, "
    "n_samples, median_ms, stdev_ms, layer";
constexpr int kPublishedColumnCount = 24;

// "?1, ?2, ..., ?count".
std::string numbered_placeholders(int count) {
  std::string out;
  for (int i = 1; i <= count; ++i) out += fmt::format("{}?{}", i == 1 ? "" : ", ", i);
  return out;
}

void bind_published(SqliteStatement& s, const published::PublishedMeasurement& r) {
  s.bind(1, std::string_view(r.id))
      .bind(2, std::string_view(r.source))
      .bind(3, std::string_view(r.location))
      .bind(4, std::string_view(r.gpu))
      .bind(5, std::string_view(r.network))
      .bind(6, std::string_view(r.mode))
      .bind(7, r.batch)
      .bind(8, r.input_shape)
      .bind(9, r.precision)
      .bind(10, std::string_view(r.framework))
      .bind(11, r.clock_mhz)
      .bind(12, std::string_view(r.quantity))
      .bind(13, r.value)
      .bind(14, std::string_view(r.unit))
      .bind(15, r.value_si)
      .bind(16, std::string_view(r.unit_si))
      .bind(17, std::int64_t{r.measured ? 1 : 0})
      .bind(18, std::string_view(r.derivation))
      .bind(19, std::string_view(r.grade))
      .bind(20, std::string_view(r.notes))
      .bind(21, r.n_samples)
      .bind(22, r.median_ms)
      .bind(23, r.stdev_ms)
      .bind(24, r.layer);
}

published::PublishedMeasurement read_published(const SqliteStatement& row) {
  published::PublishedMeasurement r;
  r.id = row.column_text(0);
  r.source = row.column_text(1);
  r.location = row.column_text(2);
  r.gpu = row.column_text(3);
  r.network = row.column_text(4);
  r.mode = row.column_text(5);
  r.batch = row.column_optional_int(6);
  r.input_shape = row.column_optional_text(7);
  r.precision = row.column_optional_text(8);
  r.framework = row.column_text(9);
  r.clock_mhz = row.column_optional_int(10);
  r.quantity = row.column_text(11);
  r.value = row.column_double(12);
  r.unit = row.column_text(13);
  r.value_si = row.column_optional_double(14);
  r.unit_si = row.column_text(15);
  r.measured = row.column_int(16) != 0;
  r.derivation = row.column_text(17);
  r.grade = row.column_text(18);
  r.notes = row.column_text(19);
  r.n_samples = row.column_optional_int(20);
  r.median_ms = row.column_optional_double(21);
  r.stdev_ms = row.column_optional_double(22);
  r.layer = row.column_optional_text(23);
  return r;
}

}  // namespace

PublishedStoreResult DatasetStore::add_published_measurements(
    const std::vector<published::PublishedMeasurement>& records) {
  PublishedStoreResult result;
  const std::string imported_utc = utc_now_iso8601();
  SqliteTransaction transaction(db_, path_);
  SqliteStatement find(
      db_, fmt::format("SELECT {} FROM published_measurements WHERE id = ?1", kPublishedColumns),
      path_);
  SqliteStatement insert(
      db_,
      fmt::format("INSERT INTO published_measurements ({}, imported_utc) "
                  "VALUES ({})",
                  kPublishedColumns, numbered_placeholders(kPublishedColumnCount + 1)),
      path_);
  for (const published::PublishedMeasurement& record : records) {
    find.reset();
    find.bind(1, std::string_view(record.id));
    if (find.step()) {
      const published::PublishedMeasurement stored = read_published(find);
      if (stored == record) {
        result.already_present.push_back(record.id);
      } else {
        result.conflicts.push_back({record.id, published::differing_fields(stored, record)});
      }
      continue;
    }
    insert.reset();
    bind_published(insert, record);
    insert.bind(kPublishedColumnCount + 1, std::string_view(imported_utc));
    insert.run();
    result.imported.push_back(record.id);
  }
  transaction.commit();
  return result;
}

std::vector<StoredPublishedMeasurement> DatasetStore::published_measurements(
    const PublishedFilter& filter) const {
  if (schema_version_ < 2) return {};
  // A NULL parameter matches every row, so one statement serves every combination of filters.
  SqliteStatement select(db_,
                         fmt::format("SELECT {}, imported_utc FROM published_measurements "
                                     "WHERE (?1 IS NULL OR gpu = ?1) AND (?2 IS NULL OR "
                                     "quantity = ?2) AND (?3 IS NULL OR grade = ?3) ORDER BY id",
                                     kPublishedColumns),
                         path_);
  select.bind(1, filter.gpu).bind(2, filter.quantity).bind(3, filter.grade);
  std::vector<StoredPublishedMeasurement> rows;
  while (select.step()) {
    rows.push_back({read_published(select), select.column_text(kPublishedColumnCount)});
  }
  return rows;
}

PublishedImportSummary import_published_measurements(const std::string& json_path,
                                                     const std::string& db_path) {
  published::PublishedReadResult read = published::read_published_measurements(json_path);
  DatasetStore store = DatasetStore::open(db_path);
  PublishedImportSummary summary;
  summary.input_path = json_path;
  summary.records_read = read.records_read;
  summary.accepted = read.records.size();
  summary.rejected = std::move(read.rejected);
  for (const published::PublishedMeasurement& r : read.records) {
    ++summary.per_source[r.source];
    ++summary.per_gpu[r.gpu];
    ++summary.per_quantity[r.quantity];
  }
  summary.stored = store.add_published_measurements(read.records);
  return summary;
}

}  // namespace nnergy::dataset
