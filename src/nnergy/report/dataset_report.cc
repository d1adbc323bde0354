#include "nnergy/report/dataset_report.h"

#include <fmt/format.h>

#include <map>
#include <optional>

#include "nnergy/core/error.h"
#include "nnergy/dataset/dataset_schema.h"
#include "nnergy/report/text_table.h"

namespace nnergy::report {

namespace {

nlohmann::ordered_json counts_json(const std::map<std::string, std::int64_t>& counts) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  for (const auto& [name, count] : counts) j[name] = count;
  return j;
}

std::string counts_table(const std::string& title,
                         const std::map<std::string, std::int64_t>& counts) {
  TextTable table;
  using A = TextTable::Align;
  table.add_column("records", A::kRight);
  table.add_column(title, A::kLeft);
  for (const auto& [name, count] : counts) table.add_row({std::to_string(count), name});
  return table.render();
}

std::optional<double> energy_difference(const learn::NetworkValidation& v) {
  if (!v.measured_energy_j || !v.summed_energy_j) return std::nullopt;
  return learn::relative_difference(*v.summed_energy_j, *v.measured_energy_j);
}

nlohmann::ordered_json or_null(const std::optional<double>& value) {
  return value ? nlohmann::ordered_json(*value) : nlohmann::ordered_json(nullptr);
}

}  // namespace

std::string render_text(const DatasetImportReport& report) {
  const dataset::PublishedImportSummary& s = report.summary;
  std::string out =
      fmt::format("imported published measurements from {} into {} (dataset schema version {})\n",
                  report.input.string(), report.database.string(), dataset::kDatasetSchemaVersion);
  out += fmt::format("records read: {}\n", s.records_read);
  out += fmt::format("valid: {}\n", s.accepted);
  out += fmt::format("imported: {}\n", s.stored.imported.size());
  out +=
      fmt::format("already present (same id, same content): {}\n", s.stored.already_present.size());
  out += fmt::format("conflicts (same id, other content; the stored record is kept): {}\n",
                     s.stored.conflicts.size());
  for (const dataset::PublishedConflict& c : s.stored.conflicts) {
    out += fmt::format("  {}: differs in {}\n", c.id, join_with_commas(c.fields));
  }
  out += fmt::format("rejected: {}\n", s.rejected.size());
  for (const published::RejectedRecord& r : s.rejected) {
    out += fmt::format("  {}: {}\n", r.name(), r.reason);
  }
  out += "\nvalid records per source:\n" + counts_table("source", s.per_source);
  out += "\nvalid records per GPU:\n" + counts_table("gpu", s.per_gpu);
  out += "\nvalid records per quantity:\n" + counts_table("quantity", s.per_quantity);
  return out;
}

nlohmann::ordered_json to_json(const DatasetImportReport& report) {
  const dataset::PublishedImportSummary& s = report.summary;
  nlohmann::ordered_json j;
  j["context"] = report.context.to_json();
  j["records_read"] = s.records_read;
  j["records_valid"] = s.accepted;
  j["records_imported"] = s.stored.imported.size();
  j["records_already_present"] = s.stored.already_present.size();
  j["records_conflicting"] = s.stored.conflicts.size();
  j["records_rejected"] = s.rejected.size();
  j["rejected"] = nlohmann::ordered_json::array();
  for (const published::RejectedRecord& r : s.rejected) {
    j["rejected"].push_back({{"index", r.index},
                             {"id", r.id ? nlohmann::ordered_json(*r.id) : nullptr},
                             {"name", r.name()},
                             {"reason", r.reason}});
  }
  j["conflicts"] = nlohmann::ordered_json::array();
  for (const dataset::PublishedConflict& c : s.stored.conflicts) {
    j["conflicts"].push_back({{"id", c.id}, {"differing_fields", c.fields}});
  }
  j["valid_records_per_source"] = counts_json(s.per_source);
  j["valid_records_per_gpu"] = counts_json(s.per_gpu);
  j["valid_records_per_quantity"] = counts_json(s.per_quantity);
  return j;
}

std::string render_text(const DatasetMergeReport& report) {
  const dataset::MergeSummary& s = report.summary;
  std::string out =
      fmt::format("merged {} file(s) into {}\n", report.inputs, report.output.string());
  out += fmt::format("op measurements: {} added, {} replaced, {} kept\n", s.measurements_added,
                     s.measurements_replaced, s.measurements_kept);
  out += fmt::format("network measurements: {} added, {} replaced, {} kept\n",
                     s.network_measurements_added, s.network_measurements_replaced,
                     s.network_measurements_kept);
  if (s.published_added + s.published_already_present > 0 || !s.published_conflicts.empty()) {
    out +=
        fmt::format("published measurements: {} added, {} already present, {} conflicts\n",
                    s.published_added, s.published_already_present, s.published_conflicts.size());
    for (const dataset::PublishedConflict& c : s.published_conflicts) {
      out += fmt::format("  {}: differs in {}; the record in {} is kept\n", c.id,
                         join_with_commas(c.fields), report.output.string());
    }
  }
  return out;
}

std::string render_text(const DatasetExportReport& report) {
  if (report.output.empty()) return report.csv;
  return fmt::format("wrote {} {} rows to {}\n", report.rows,
                     report.published ? "published measurement" : "measurement",
                     report.output.string());
}

std::string render_text(const DatasetValidationReport& report) {
  if (report.networks.empty()) {
    return fmt::format(
        "{}: no whole-network measurement to validate (measure networks with "
        "`nnergy profile --networks ...`)\n",
        report.database.string());
  }
  TextTable table;
  using A = TextTable::Align;
  table.add_column("network", A::kLeft);
  table.add_column("mode", A::kLeft);
  table.add_column("measured ms", A::kRight);
  table.add_column("sum of ops ms", A::kRight);
  table.add_column("difference", A::kRight);
  table.add_column("ops measured", A::kRight);
  table.add_column("nodes not measured", A::kRight);
  table.add_column("measured J", A::kRight);
  table.add_column("sum of ops J", A::kRight);
  table.add_column("energy difference", A::kRight);
  const auto percent = [](std::optional<double> d) {
    return d ? fmt::format("{:+.1f} %", 100.0 * *d) : std::string("-");
  };
  for (const learn::NetworkValidation& v : report.networks) {
    table.add_row({v.network, v.mode, fmt::format("{:.2f}", 1e3 * v.measured_time_s),
                   fmt::format("{:.2f}", 1e3 * v.summed_time_s),
                   percent(learn::relative_difference(v.summed_time_s, v.measured_time_s)),
                   fmt::format("{}/{}", v.ops_measured, v.unique_ops),
                   std::to_string(v.nodes_not_measured),
                   v.measured_energy_j ? fmt::format("{:.4f}", *v.measured_energy_j) : "-",
                   v.summed_energy_j ? fmt::format("{:.4f}", *v.summed_energy_j) : "-",
                   percent(energy_difference(v))});
  }
  return fmt::format(
             "{}: whole networks vs the sum of their measured ops (count x op time; "
             "difference = (sum - measured) / measured; ops outside the whitelist are "
             "not measured and not summed)\n",
             report.database.string()) +
         table.render();
}

nlohmann::ordered_json to_json(const DatasetValidationReport& report) {
  nlohmann::ordered_json j;
  j["context"] = report.context.to_json();
  j["networks"] = nlohmann::ordered_json::array();
  for (const learn::NetworkValidation& v : report.networks) {
    j["networks"].push_back({{"network", v.network},
                             {"mode", v.mode},
                             {"dtype", v.dtype},
                             {"clock_mhz", v.clock_mhz},
                             {"measured_time_s", v.measured_time_s},
                             {"summed_op_time_s", v.summed_time_s},
                             {"unique_ops", v.unique_ops},
                             {"unique_ops_measured", v.ops_measured},
                             {"nodes_not_measured", v.nodes_not_measured},
                             {"time_relative_difference", or_null(learn::relative_difference(
                                                              v.summed_time_s, v.measured_time_s))},
                             {"measured_energy_j", or_null(v.measured_energy_j)},
                             {"summed_op_energy_j", or_null(v.summed_energy_j)},
                             {"energy_relative_difference", or_null(energy_difference(v))}});
  }
  return j;
}

}  // namespace nnergy::report
