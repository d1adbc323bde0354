#include "nnergy/dataset/dataset_export.h"

#include <fmt/format.h>
#include <sqlite3.h>

#include <sstream>

#include "nnergy/core/csv.h"
#include "nnergy/core/run_context.h"
#include "nnergy/dataset/dataset_schema.h"
#include "nnergy/dataset/sqlite_statement.h"

namespace nnergy::dataset {

namespace {

// (CSV column, SQL expression) pairs for a file of schema `version`; one list keeps the header
// and the SELECT in step. The CSV columns are the same for every version.
std::vector<std::pair<std::string, std::string>> column_expressions(int version) {
  std::vector<std::pair<std::string, std::string>> c = {
      {"device_name", "d.name"},
      {"device_uuid", "d.uuid"},
      {"device_kind", "d.kind"},
      {"driver_version", "d.driver_version"},
      {"session_uuid", "s.session_uuid"},
      {"host", "s.host"},
      {"tool_version", "s.tool_version"},
      {"signature", "o.signature"},
      {"op_type", "o.op_type"},
      {"op_class", "o.op_class"},
      {"op_dtype", "o.dtype"},
      {"whitelisted", "o.whitelisted"},
      {"known", "o.known"},
      {"parameter_count", "o.parameter_count"},
      {"input_shapes_json", "o.input_shapes_json"},
      {"attributes_json", "o.attributes_json"},
  };
  for (const char* pass : kOpPasses) {
    for (const char* quantity : {"mac_count", "flop_count", "byte_count", "kernel_count"}) {
      const std::string name = fmt::format("{}_{}", pass, quantity);
      // Before schema 3 the byte count's column was {pass}_bytes.
      const std::string column =
          std::string_view(quantity) == "byte_count" ? ops_byte_count_column(pass, version) : name;
      c.emplace_back(name, "o." + column);
    }
  }
  for (const char* name :
       {"mode", "clock_mhz", "dtype", "iterations", "repeats", "time_s", "time_std_s", "power_w",
        "power_std_w", "energy_j", "energy_std_j", "samples_kept", "samples_dropped", "status",
        "message", "measured_utc"}) {
    c.emplace_back(name, std::string("m.") + name);
  }
  return c;
}

// Writes every row of `select` (its first `column_count` columns) as CSV records.
void write_rows(SqliteStatement& select, int column_count, std::ostream& rows,
                std::int64_t& row_count) {
  while (select.step()) {
    for (int c = 0; c < column_count; ++c) {
      if (c > 0) rows << ',';
      if (select.column_is_null(c)) continue;
      // Integers stay integers; reals use the shortest text that reads back exactly.
      switch (select.column_type(c)) {
        case SQLITE_INTEGER:
          rows << select.column_int(c);
          break;
        case SQLITE_FLOAT:
          rows << fmt::format("{}", select.column_double(c));
          break;
        default:
          rows << csv::field(select.column_text(c));
      }
    }
    rows << '\n';
    ++row_count;
  }
}

// The "# key: value" context lines at the top of every export.
void write_context(const DatasetStore& store, std::ostream& out, const CsvExportOptions& options,
                   std::int64_t row_count, std::string_view units) {
  RunContext context = RunContext::now(options.command_line);
  context.add("dataset_schema_version", store.schema_version())
      .add("source", store.path())
      .add("row_count", row_count)
      .add("units", std::string(units));
  out << context.to_csv_comments();
}

void write_header(std::ostream& out, const std::vector<std::string>& columns) {
  bool first = true;
  for (const std::string& name : columns) {
    if (!first) out << ',';
    first = false;
    out << name;
  }
  out << '\n';
}

}  // namespace

const std::vector<std::string>& csv_columns() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n;
    for (const auto& [name, expression] : column_expressions(kDatasetSchemaVersion)) {
      n.push_back(name);
    }
    return n;
  }();
  return names;
}

std::int64_t export_csv(const DatasetStore& store, std::ostream& out,
                        const CsvExportOptions& options) {
  const auto expressions = column_expressions(store.schema_version());
  std::string select_list;
  for (const auto& [name, expression] : expressions) {
    if (!select_list.empty()) select_list += ", ";
    select_list += expression;
  }
  SqliteStatement select(
      store.connection(),
      fmt::format("SELECT {} FROM measurements m JOIN ops o ON o.id = m.op_id "
                  "JOIN devices d ON d.id = m.device_id JOIN sessions s ON s.id = m.session_id "
                  "{} ORDER BY d.id, o.id, m.mode, m.clock_mhz, m.dtype",
                  select_list, options.include_errors ? "" : "WHERE m.status = 'ok'"),
      store.path());

  // Rows are formatted first so the context block can state the row count.
  std::ostringstream rows;
  std::int64_t row_count = 0;
  const int column_count = static_cast<int>(expressions.size());
  write_rows(select, column_count, rows, row_count);

  write_context(store, out, options, row_count,
                "SI; time, power and energy are per iteration; bytes are a lower bound (each "
                "tensor touched once)");
  write_header(out, csv_columns());
  out << rows.str();
  return row_count;
}

const std::vector<std::string>& published_csv_columns() {
  static const std::vector<std::string> names = {
      "id",          "source",    "location",  "gpu",         "network",  "mode",  "batch",
      "input_shape", "precision", "framework", "clock_mhz",   "quantity", "value", "unit",
      "value_si",    "unit_si",   "measured",  "derivation",  "grade",    "notes", "n_samples",
      "median_ms",   "stdev_ms",  "layer",     "imported_utc"};
  return names;
}

std::int64_t export_published_csv(const DatasetStore& store, std::ostream& out,
                                  const CsvExportOptions& options) {
  std::ostringstream rows;
  std::int64_t row_count = 0;
  if (store.schema_version() >= 2) {
    std::string select_list;
    for (const std::string& name : published_csv_columns()) {
      if (!select_list.empty()) select_list += ", ";
      select_list += name;
    }
    SqliteStatement select(
        store.connection(),
        fmt::format("SELECT {} FROM published_measurements ORDER BY id", select_list),
        store.path());
    write_rows(select, static_cast<int>(published_csv_columns().size()), rows, row_count);
  }
  write_context(store, out, options, row_count,
                "value is in the column unit, exactly as published; value_si is the same figure "
                "in unit_si; median_ms and stdev_ms in ms; clock_mhz in MHz");
  write_header(out, published_csv_columns());
  out << rows.str();
  return row_count;
}

}  // namespace nnergy::dataset
