// `nnergy dataset`: merge measured datasets, export them as a flat table, import published
// measurements.
#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "command.h"
#include "nnergy/core/error.h"
#include "nnergy/core/run_context.h"
#include "nnergy/dataset/dataset_export.h"
#include "nnergy/dataset/dataset_merge.h"
#include "nnergy/dataset/dataset_schema.h"
#include "nnergy/dataset/dataset_store.h"
#include "nnergy/dataset/published_import.h"
#include "nnergy/report/text_table.h"

namespace nnergy::cli {

namespace {

struct MergeOptions {
  std::string output;
  std::vector<std::string> inputs;
};

struct ValidateOptions {
  std::string db;
  bool json = false;
};

struct ExportOptions {
  std::string db;
  bool csv = false;
  std::string table = "measurements";
  std::string output;
};

struct ImportOptions {
  std::string file;
  std::string db;
  bool json = false;
};

void require_existing(const std::string& path) {
  if (!std::filesystem::exists(path)) {
    throw InvalidInput(fmt::format("{}: no such dataset file", path));
  }
}

CommandResult run_merge(const MergeOptions& o) {
  for (const std::string& in : o.inputs) {
    require_existing(in);
    if (std::filesystem::exists(o.output) && std::filesystem::equivalent(in, o.output)) {
      throw InvalidInput(fmt::format("{}: an input cannot also be the output", in));
    }
  }
  const dataset::MergeSummary s = dataset::merge_datasets(o.output, o.inputs);
  std::string out = fmt::format("merged {} file(s) into {}\n", o.inputs.size(), o.output);
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
                         join_with_commas(c.fields), o.output);
    }
  }
  return {out, 0};
}

CommandResult run_export(const ExportOptions& o, const std::string& command_line) {
  if (!o.csv) throw InvalidInput("dataset export: choose a format: --csv");
  require_existing(o.db);
  const dataset::DatasetStore store =
      dataset::DatasetStore::open(o.db, dataset::OpenMode::kReadOnly);
  dataset::CsvExportOptions options;
  options.command_line = command_line;
  std::ostringstream table;
  const bool published = o.table == "published";
  const std::int64_t rows = published ? dataset::export_published_csv(store, table, options)
                                      : dataset::export_csv(store, table, options);
  if (o.output.empty() || o.output == "-") return {table.str(), 0};
  // Written whole after the export succeeded, so a failed export leaves no partial file.
  std::ofstream file(o.output, std::ios::binary | std::ios::trunc);
  file << table.str();
  file.close();
  if (!file) throw InvalidInput(fmt::format("-o {}: cannot write the file", o.output));
  return {fmt::format("wrote {} {} rows to {}\n", rows,
                      published ? "published measurement" : "measurement", o.output),
          0};
}

nlohmann::ordered_json counts_json(const std::map<std::string, std::int64_t>& counts) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  for (const auto& [name, count] : counts) j[name] = count;
  return j;
}

std::string import_json(const dataset::PublishedImportSummary& s, const ImportOptions& o,
                        const std::string& command_line) {
  nlohmann::ordered_json j;
  j["context"] = RunContext::now(command_line)
                     .add("input", o.file)
                     .add("database", o.db)
                     .add("dataset_schema_version", dataset::kDatasetSchemaVersion)
                     .to_json();
  j["records_read"] = s.records_read;
  j["records_valid"] = s.accepted;
  j["records_imported"] = s.stored.imported.size();
  j["records_already_present"] = s.stored.already_present.size();
  j["records_conflicting"] = s.stored.conflicts.size();
  j["records_rejected"] = s.rejected.size();
  j["rejected"] = nlohmann::ordered_json::array();
  for (const dataset::RejectedRecord& r : s.rejected) {
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
  return j.dump(2) + "\n";
}

std::string counts_table(const std::string& title,
                         const std::map<std::string, std::int64_t>& counts) {
  report::TextTable table;
  using A = report::TextTable::Align;
  table.add_column("records", A::kRight);
  table.add_column(title, A::kLeft);
  for (const auto& [name, count] : counts) table.add_row({std::to_string(count), name});
  return table.render();
}

std::string import_text(const dataset::PublishedImportSummary& s, const ImportOptions& o) {
  std::string out =
      fmt::format("imported published measurements from {} into {} (dataset schema version {})\n",
                  o.file, o.db, dataset::kDatasetSchemaVersion);
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
  for (const dataset::RejectedRecord& r : s.rejected) {
    out += fmt::format("  {}: {}\n", r.name(), r.reason);
  }
  out += "\nvalid records per source:\n" + counts_table("source", s.per_source);
  out += "\nvalid records per GPU:\n" + counts_table("gpu", s.per_gpu);
  out += "\nvalid records per quantity:\n" + counts_table("quantity", s.per_quantity);
  return out;
}

CommandResult run_import(const ImportOptions& o, const std::string& command_line) {
  if (!std::filesystem::exists(o.file)) {
    throw InvalidInput(
        fmt::format("{}: no such file (expected a JSON list of published measurements, e.g. "
                    "data/calibration/measured_public.json)",
                    o.file));
  }
  const dataset::PublishedImportSummary s = dataset::import_published_measurements(o.file, o.db);
  return {o.json ? import_json(s, o, command_line) : import_text(s, o), 0};
}

// One network measurement against the sum of its measured operations (seed 000 §6.1).
struct Validation {
  std::string network;
  std::string mode;
  std::string dtype;
  std::int64_t clock_mhz = 0;
  double measured_time_s = 0;
  double summed_time_s = 0;  ///< Σ count × op time over the ops with an ok measurement
  std::int64_t unique_ops = 0;
  std::int64_t ops_measured = 0;        ///< unique ops with an ok measurement
  std::int64_t nodes_not_measured = 0;  ///< occurrences of the other ops (not whitelisted, errors)
  std::optional<double> measured_energy_j;
  std::optional<double> summed_energy_j;  ///< only when every measured op has an energy
};

std::optional<double> relative_difference(double summed, double measured) {
  if (!(measured > 0)) return std::nullopt;
  return (summed - measured) / measured;
}

std::vector<Validation> validate(const dataset::DatasetStore& store) {
  using Key = std::tuple<std::int64_t, std::string, std::string, std::int64_t, std::string>;
  std::map<Key, const dataset::MeasurementRecord*> ops;
  const auto measurements = store.measurements();
  for (const dataset::MeasurementRecord& m : measurements) {
    if (m.values.status != dataset::MeasurementStatus::kOk || !m.values.time_s) continue;
    ops[{m.device_id, m.key.signature, m.key.mode, m.key.clock_mhz, m.key.dtype}] = &m;
  }
  const auto networks = store.networks();
  std::vector<Validation> rows;
  for (const dataset::NetworkMeasurementRecord& n : store.network_measurements()) {
    if (n.values.status != dataset::MeasurementStatus::kOk || !n.values.time_s) continue;
    const dataset::NetworkRecord* net = nullptr;
    for (const dataset::NetworkRecord& r : networks) {
      if (r.name == n.network_name && r.inputs_json == n.network_inputs_json) net = &r;
    }
    if (net == nullptr) continue;
    Validation v;
    v.network = n.network_name;
    v.mode = n.mode;
    v.dtype = n.dtype;
    v.clock_mhz = n.clock_mhz;
    v.measured_time_s = *n.values.time_s;
    v.measured_energy_j = n.values.energy_j;
    double energy = 0;
    bool all_energy = true;
    for (const auto& [signature, count] : net->op_counts) {
      ++v.unique_ops;
      const auto it = ops.find({n.device_id, signature, n.mode, n.clock_mhz, n.dtype});
      if (it == ops.end()) {
        v.nodes_not_measured += count;
        continue;
      }
      ++v.ops_measured;
      const dataset::MeasuredValues& m = it->second->values;
      v.summed_time_s += static_cast<double>(count) * *m.time_s;
      if (m.energy_j) {
        energy += static_cast<double>(count) * *m.energy_j;
      } else {
        all_energy = false;
      }
    }
    if (all_energy && v.ops_measured > 0) v.summed_energy_j = energy;
    rows.push_back(std::move(v));
  }
  return rows;
}

CommandResult run_validate(const ValidateOptions& o, const std::string& command_line) {
  require_existing(o.db);
  const dataset::DatasetStore store =
      dataset::DatasetStore::open(o.db, dataset::OpenMode::kReadOnly);
  const std::vector<Validation> rows = validate(store);
  if (o.json) {
    nlohmann::ordered_json j;
    j["context"] = {{"tool", "nnergy"}, {"command_line", command_line}, {"database", o.db}};
    j["networks"] = nlohmann::ordered_json::array();
    for (const Validation& v : rows) {
      nlohmann::ordered_json r = {{"network", v.network},
                                  {"mode", v.mode},
                                  {"dtype", v.dtype},
                                  {"clock_mhz", v.clock_mhz},
                                  {"measured_time_s", v.measured_time_s},
                                  {"summed_op_time_s", v.summed_time_s},
                                  {"unique_ops", v.unique_ops},
                                  {"unique_ops_measured", v.ops_measured},
                                  {"nodes_not_measured", v.nodes_not_measured}};
      const auto d = relative_difference(v.summed_time_s, v.measured_time_s);
      r["time_relative_difference"] = d ? nlohmann::ordered_json(*d) : nullptr;
      r["measured_energy_j"] =
          v.measured_energy_j ? nlohmann::ordered_json(*v.measured_energy_j) : nullptr;
      r["summed_op_energy_j"] =
          v.summed_energy_j ? nlohmann::ordered_json(*v.summed_energy_j) : nullptr;
      const auto e = v.measured_energy_j && v.summed_energy_j
                         ? relative_difference(*v.summed_energy_j, *v.measured_energy_j)
                         : std::nullopt;
      r["energy_relative_difference"] = e ? nlohmann::ordered_json(*e) : nullptr;
      j["networks"].push_back(std::move(r));
    }
    return {j.dump(2) + "\n", 0};
  }
  if (rows.empty()) {
    return {fmt::format("{}: no whole-network measurement to validate (measure networks with "
                        "`nnergy profile --networks ...`)\n",
                        o.db),
            0};
  }
  report::TextTable table;
  using A = report::TextTable::Align;
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
  for (const Validation& v : rows) {
    table.add_row({v.network, v.mode, fmt::format("{:.2f}", 1e3 * v.measured_time_s),
                   fmt::format("{:.2f}", 1e3 * v.summed_time_s),
                   percent(relative_difference(v.summed_time_s, v.measured_time_s)),
                   fmt::format("{}/{}", v.ops_measured, v.unique_ops),
                   std::to_string(v.nodes_not_measured),
                   v.measured_energy_j ? fmt::format("{:.4f}", *v.measured_energy_j) : "-",
                   v.summed_energy_j ? fmt::format("{:.4f}", *v.summed_energy_j) : "-",
                   percent(v.measured_energy_j && v.summed_energy_j
                               ? relative_difference(*v.summed_energy_j, *v.measured_energy_j)
                               : std::nullopt)});
  }
  return {fmt::format("{}: whole networks vs the sum of their measured ops (count x op time; "
                      "difference = (sum - measured) / measured; ops outside the whitelist are "
                      "not measured and not summed)\n",
                      o.db) +
              table.render(),
          0};
}

}  // namespace

void add_dataset_command(CLI::App& app, CommandRun* selected, const std::string& command_line) {
  CLI::App* cmd = app.add_subcommand(
      "dataset", "Merge, export and validate measured datasets; import published measurements");
  cmd->require_subcommand(1);

  auto imp = std::make_shared<ImportOptions>();
  CLI::App* import_cmd = cmd->add_subcommand(
      "import", "Add published measurements (a JSON list, data/calibration/) to a dataset");
  import_cmd->add_option("FILE", imp->file, "JSON list of published measurement records")
      ->required();
  import_cmd->add_option("--db", imp->db, "dataset file (created when missing)")->required();
  import_cmd->add_flag("--json", imp->json, "write the summary as JSON");
  import_cmd->callback([imp, selected, command_line] {
    *selected = [imp, command_line] { return run_import(*imp, command_line); };
  });

  auto merge = std::make_shared<MergeOptions>();
  CLI::App* merge_cmd =
      cmd->add_subcommand("merge", "Join datasets (e.g. the shards of a campaign) into OUT");
  merge_cmd->add_option("OUT", merge->output, "destination dataset (created when missing)")
      ->required();
  merge_cmd->add_option("IN", merge->inputs, "datasets to merge, in order")->required();
  merge_cmd->callback([merge, selected] { *selected = [merge] { return run_merge(*merge); }; });

  auto val = std::make_shared<ValidateOptions>();
  CLI::App* validate_cmd = cmd->add_subcommand(
      "validate", "Compare measured whole networks with the sum of their measured ops");
  validate_cmd->add_option("--db", val->db, "dataset file")->required();
  validate_cmd->add_flag("--json", val->json, "write JSON instead of text");
  validate_cmd->callback([val, selected, command_line] {
    *selected = [val, command_line] { return run_validate(*val, command_line); };
  });

  auto exp = std::make_shared<ExportOptions>();
  CLI::App* export_cmd =
      cmd->add_subcommand("export", "Write a table of the dataset as flat CSV (pandas-ready)");
  export_cmd->add_option("--db", exp->db, "dataset file")->required();
  export_cmd->add_flag("--csv", exp->csv, "CSV with '#' context lines");
  export_cmd
      ->add_option("--table", exp->table,
                   "measurements (op measurements with their features) or published "
                   "(published measurements from `dataset import`)")
      ->check(CLI::IsMember({"measurements", "published"}))
      ->capture_default_str();
  export_cmd->add_option("-o,--output", exp->output, "output file (default: stdout)");
  export_cmd->callback([exp, selected, command_line] {
    *selected = [exp, command_line] { return run_export(*exp, command_line); };
  });
}

}  // namespace nnergy::cli
