// `nnergy account`: attribute a real run's measured energy to operators, layers and modules
// (seed 001 Smaragdine), from a program trace and power traces.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "command.h"
#include "nnergy/account/account_run.h"
#include "nnergy/account/accounting_precision.h"
#include "nnergy/account/footprint.h"
#include "nnergy/account/footprint_writers.h"
#include "nnergy/core/error.h"
#include "nnergy/core/run_context.h"
#include "nnergy/report/text_table.h"

namespace nnergy::cli {
namespace {

using account::Accounting;
using account::AccountRun;
using account::EddNode;
using account::Footprint;

struct AccountOptions {
  std::vector<std::string> runs;
  std::vector<std::string> traces;
  std::vector<std::string> powers;
  std::vector<std::string> power_devices;
  std::optional<double> offset_us;
  bool interpolate = false;
  int level = 2;
  std::size_t top = 10;
  std::vector<std::string> summarize;
  bool no_default_rules = false;
  std::string json_file;
  std::string csv_file;
  std::string folded_file;
  std::string perfetto_file;
  bool assess = false;
  std::size_t max_factor = 8;
};

struct CompareOptions {
  std::string first;
  std::string second;
};

std::string joules(double j) { return fmt::format("{:.4g} J", j); }
std::string seconds(double s) { return fmt::format("{:.4g} s", s); }
std::string percent(double part, double whole) {
  return whole > 0 ? fmt::format("{:.1f} %", 100.0 * part / whole) : std::string("-");
}
std::string similarity_text(double r) {
  return std::isnan(r) ? std::string("undefined") : fmt::format("{:.3f}", r);
}

// Every file is first written beside its destination, and all are renamed only once all were
// written, so that a failing run leaves no half-written output.
void write_files_atomically(const std::vector<std::pair<std::string, std::string>>& files) {
  std::vector<std::string> temporaries;
  const auto cleanup = [&] {
    for (const std::string& t : temporaries) std::remove(t.c_str());
  };
  for (const auto& [path, text] : files) {
    const std::string temporary = path + ".tmp." + std::to_string(::getpid());
    temporaries.push_back(temporary);
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out << text;
    out.close();
    if (!out) {
      cleanup();
      throw InvalidInput(fmt::format("{}: cannot write the output file", path));
    }
  }
  for (std::size_t i = 0; i < files.size(); ++i) {
    std::error_code ec;
    std::filesystem::rename(temporaries[i], files[i].first, ec);
    if (ec) {
      cleanup();
      throw InvalidInput(
          fmt::format("{}: cannot write the output file ({})", files[i].first, ec.message()));
    }
  }
}

std::map<std::string, std::string> parse_power_devices(const std::vector<std::string>& items) {
  std::map<std::string, std::string> result;
  for (const std::string& item : items) {
    const std::size_t equals = item.rfind('=');
    const std::string device = equals == std::string::npos ? "" : item.substr(equals + 1);
    const bool valid = device == "cpu" || device == "none" ||
                       (device.rfind("gpu:", 0) == 0 && device.size() > 4 &&
                        device.find_first_not_of("0123456789", 4) == std::string::npos);
    if (equals == std::string::npos || equals == 0 || !valid) {
      throw InvalidInput(
          "--power-device '" + item +
          "': expected SOURCE=DEVICE with DEVICE cpu, gpu:N or none (e.g. "
          "synthetic=cpu), found " +
          (equals == std::string::npos ? std::string("no '='") : "device '" + device + "'"));
    }
    result[item.substr(0, equals)] = device;
  }
  return result;
}

// One run's inputs: a session directory, or --trace/--power files.
std::vector<account::AccountInputs> inputs_of(const AccountOptions& o) {
  std::vector<account::AccountInputs> all;
  const auto devices = parse_power_devices(o.power_devices);
  for (const std::string& run : o.runs) {
    if (!std::filesystem::is_directory(run)) {
      throw InvalidInput("RUN '" + run +
                         "': expected a session directory (with session.json), found " +
                         (std::filesystem::exists(run) ? "a file" : "nothing"));
    }
    account::AccountInputs inputs = account::read_session_directory(run);
    for (const std::string& t : o.traces) inputs.trace_files.emplace_back(t);
    for (const std::string& p : o.powers) inputs.power_files.emplace_back(p);
    all.push_back(std::move(inputs));
  }
  if (all.empty()) {
    if (o.traces.empty() || o.powers.empty()) {
      throw InvalidInput(
          "nnergy account: expected a RUN directory, or --trace FILE and --power FILE, found " +
          std::string(o.traces.empty() ? "no trace" : "no power trace"));
    }
    account::AccountInputs inputs;
    for (const std::string& t : o.traces) inputs.trace_files.emplace_back(t);
    for (const std::string& p : o.powers) inputs.power_files.emplace_back(p);
    inputs.label = std::filesystem::path(o.traces.front()).filename().string();
    all.push_back(std::move(inputs));
  }
  for (account::AccountInputs& inputs : all) {
    if (o.offset_us) inputs.explicit_offset_s = *o.offset_us * 1e-6;
    for (const auto& [source, device] : devices) inputs.source_devices[source] = device;
  }
  return all;
}

void print_edd(const EddNode& node, const std::string& parent, double parent_energy_j, int depth,
               int max_depth, report::TextTable& table) {
  const std::string indent(static_cast<std::size_t>(2 * depth), ' ');
  table.add_row({indent + node.name, joules(node.energy_j),
                 parent.empty() ? std::string("100.0 %") : percent(node.energy_j, parent_energy_j),
                 parent.empty() ? std::string("") : parent, seconds(node.time_s)});
  if (depth >= max_depth) return;
  for (const EddNode& child : node.children) {
    print_edd(child, node.name, node.energy_j, depth + 1, max_depth, table);
  }
}

struct RunResult {
  AccountRun run;
  Accounting accounting;
  Footprint tef;
  Footprint stef;
};

RunResult account_one(const account::AccountInputs& inputs, const AccountOptions& o,
                      const account::TraceReaderRegistry& readers,
                      const std::vector<account::SummarizeRule>& rules) {
  RunResult r;
  r.run = account::load_account_run(inputs, readers, o.interpolate);
  r.accounting = account::account_energy(r.run.events, r.run.power, {o.interpolate});
  r.tef = account::tensor_energy_footprint(r.run.events, r.accounting);
  r.stef = account::summarize(r.tef, rules);
  return r;
}

std::string report_text(const RunResult& r, const AccountOptions& o) {
  std::string out;
  const AccountRun& run = r.run;
  std::string formats;
  for (const std::string& f : run.trace_formats) formats += (formats.empty() ? "" : ", ") + f;
  out += fmt::format(
      "Energy accounting of {} ({} trace, {} events); all energies are measured "
      "power attributed to events\n",
      run.label, formats, run.events.size());
  out += fmt::format("Time base: accounting time 0 = UNIX time {:.6f} s; power: {}\n",
                     run.base_epoch_s, [&] {
                       std::string s;
                       for (const auto& t : run.power) {
                         for (const auto& id : t.source_ids) {
                           s += (s.empty() ? "" : ", ") + id + " -> " + t.device;
                         }
                       }
                       return s.empty() ? std::string("none assigned") : s;
                     }());
  out += fmt::format("Alignment: {} power between samples, equal split among concurrent events\n\n",
                     o.interpolate ? "interpolated" : "most recent sample's (recency)");

  // Energy distribution diagram.
  const EddNode edd = account::energy_distribution_diagram(r.stef);
  report::TextTable table;
  table.add_column("unit (EDD, summarized)", report::TextTable::Align::kLeft);
  table.add_column("attributed energy", report::TextTable::Align::kRight);
  table.add_column("share of parent", report::TextTable::Align::kRight);
  table.add_column("parent", report::TextTable::Align::kLeft);
  table.add_column("exclusive time", report::TextTable::Align::kRight);
  print_edd(edd, "", edd.energy_j, 0, o.level, table);
  out += fmt::format("Energy distribution diagram (levels <= {}):\n", o.level) + table.render();

  // Hotspots.
  std::vector<const account::FootprintEntry*> by_energy;
  for (const auto& e : r.stef) by_energy.push_back(&e);
  std::vector<const account::FootprintEntry*> by_power = by_energy;
  std::stable_sort(by_energy.begin(), by_energy.end(),
                   [](auto* a, auto* b) { return a->energy_j > b->energy_j; });
  std::stable_sort(by_power.begin(), by_power.end(),
                   [](auto* a, auto* b) { return a->power_w() > b->power_w(); });
  const std::size_t n_top = std::min(o.top, by_energy.size());
  report::TextTable hot;
  hot.add_column("energy hotspot (STEF)", report::TextTable::Align::kLeft);
  hot.add_column("attributed energy", report::TextTable::Align::kRight);
  hot.add_column("share", report::TextTable::Align::kRight);
  hot.add_column("exclusive time", report::TextTable::Align::kRight);
  hot.add_column("events", report::TextTable::Align::kRight);
  for (std::size_t k = 0; k < n_top; ++k) {
    const auto* e = by_energy[k];
    hot.add_row({e->name, joules(e->energy_j), percent(e->energy_j, edd.energy_j),
                 seconds(e->time_s), std::to_string(e->event_count)});
  }
  out += fmt::format("\nTop {} energy hotspots:\n", n_top) + hot.render();
  report::TextTable hot_power;
  hot_power.add_column("power hotspot (STPF)", report::TextTable::Align::kLeft);
  hot_power.add_column("attributed power", report::TextTable::Align::kRight);
  hot_power.add_column("attributed energy", report::TextTable::Align::kRight);
  hot_power.add_column("exclusive time", report::TextTable::Align::kRight);
  for (std::size_t k = 0; k < n_top; ++k) {
    const auto* e = by_power[k];
    hot_power.add_row(
        {e->name, fmt::format("{:.4g} W", e->power_w()), joules(e->energy_j), seconds(e->time_s)});
  }
  out += fmt::format("\nTop {} power hotspots (attributed energy / exclusive time):\n", n_top) +
         hot_power.render();

  double forward = 0, backward = 0, other = 0;
  for (const auto& e : r.tef) {
    forward += e.forward_energy_j;
    backward += e.backward_energy_j;
    other += e.other_energy_j;
  }
  const double attributed = forward + backward + other;
  out += fmt::format("\nPasses (attributed): forward {} ({}), backward {} ({}), other {} ({})\n",
                     joules(forward), percent(forward, attributed), joules(backward),
                     percent(backward, attributed), joules(other), percent(other, attributed));

  out += "\nConservation per device (measured over the device's event window):\n";
  double measured_total = 0, attributed_total = 0, idle_total = 0, unmeasured_total = 0;
  for (const auto& d : r.accounting.devices) {
    if (d.has_power) {
      out += fmt::format(
          "  {}: measured {} = attributed {} + idle {} (no event running for {}); "
          "events without power: {}\n",
          d.device, joules(d.measured_energy_j), joules(d.attributed_energy_j),
          joules(d.idle_energy_j), seconds(d.idle_time_s), seconds(d.unmeasured_busy_time_s));
    } else {
      out += fmt::format(
          "  {}: no power trace for this device; {} events, {} of event time "
          "unmeasured (not guessed)\n",
          d.device, d.event_count, seconds(d.unmeasured_busy_time_s));
    }
    measured_total += d.measured_energy_j;
    attributed_total += d.attributed_energy_j;
    idle_total += d.idle_energy_j;
    unmeasured_total += d.unmeasured_busy_time_s;
  }
  for (const auto& range : run.power_ranges) {
    out += fmt::format("  {} power trace: {} measured over {} in all (the window is part of it)\n",
                       range.device, joules(range.energy_j), seconds(range.end_s - range.start_s));
  }
  out += fmt::format(
      "Conservation: attributed {} + idle {} = measured {} (difference {}); unmeasured event "
      "time {}\n",
      joules(attributed_total), joules(idle_total), joules(measured_total),
      joules(attributed_total + idle_total - measured_total), seconds(unmeasured_total));
  if (!run.warnings.empty()) {
    out += fmt::format("\nWarnings ({}):\n", run.warnings.size());
    for (const std::string& w : run.warnings) out += "  " + w + "\n";
  }
  return out;
}

CommandResult run_account(const AccountOptions& o, const std::string& command_line) {
  if (o.level < 0) throw InvalidInput("--level: expected >= 0, found " + std::to_string(o.level));
  if (o.max_factor < 2) {
    throw InvalidInput("--max-factor: expected >= 2, found " + std::to_string(o.max_factor));
  }
  account::TraceReaderRegistry readers;
  account::register_standard_trace_readers(readers);
  // The user's rules run first, so that they see the names before the defaults rewrite them.
  std::vector<account::SummarizeRule> rules;
  for (const std::string& rule : o.summarize) {
    rules.push_back(account::parse_summarize_rule(rule, "--summarize"));
  }
  if (!o.no_default_rules) {
    for (auto& rule : account::default_summarize_rules()) rules.push_back(std::move(rule));
  }
  const auto all_inputs = inputs_of(o);
  const bool wants_files = !o.json_file.empty() || !o.csv_file.empty() || !o.folded_file.empty() ||
                           !o.perfetto_file.empty();
  if (wants_files && all_inputs.size() > 1) {
    throw InvalidInput("--json/--csv/--folded/--perfetto: expected one RUN, found " +
                       std::to_string(all_inputs.size()));
  }
  std::vector<RunResult> results;
  for (const auto& inputs : all_inputs) results.push_back(account_one(inputs, o, readers, rules));

  CommandResult result;
  for (std::size_t i = 0; i < results.size(); ++i) {
    if (i > 0) result.output += "\n";
    result.output += report_text(results[i], o);
  }
  if (o.assess) {
    result.output += "\nAccounting precision (seed 001 §5.4; PCC of attributed STEFs):\n";
    for (const RunResult& r : results) {
      const auto points = account::sparsing_similarity(r.run, {o.interpolate}, rules, o.max_factor);
      std::string line;
      for (const auto& p : points) {
        line += fmt::format("{}x {}  ", p.factor, similarity_text(p.similarity));
      }
      result.output += fmt::format("  ASSS {} (power samples decimated): {}\n", r.run.label, line);
    }
    std::vector<Footprint> stefs;
    for (const RunResult& r : results) stefs.push_back(r.stef);
    if (stefs.size() >= 2) {
      const auto widening = account::widening_similarity(stefs);
      std::string line;
      for (std::size_t k = 0; k < widening.size(); ++k) {
        line += fmt::format("runs 1..{} {}  ", k + 2, similarity_text(widening[k]));
      }
      result.output += "  ASSW (run 1 vs runs merged): " + line + "\n";
      report::TextTable matrix;
      matrix.add_column("PCC", report::TextTable::Align::kLeft);
      for (const RunResult& r : results)
        matrix.add_column(r.run.label, report::TextTable::Align::kRight);
      const auto pairs = account::pairwise_similarity(stefs);
      for (std::size_t i = 0; i < results.size(); ++i) {
        std::vector<std::string> row{results[i].run.label};
        for (double v : pairs[i]) row.push_back(similarity_text(v));
        matrix.add_row(std::move(row));
      }
      result.output += "  Pairwise similarity across runs:\n" + matrix.render();
    } else {
      result.output += "  ASSW and pairwise similarity need two or more RUN directories\n";
    }
  }

  if (wants_files) {
    const RunResult& r = results.front();
    RunContext context = RunContext::now(command_line);
    context.add("run", r.run.label);
    context.add("alignment", o.interpolate ? "interpolate" : "recency");
    context.add("base_epoch_s", r.run.base_epoch_s);
    std::vector<std::pair<std::string, std::string>> files;
    if (!o.json_file.empty()) {
      nlohmann::ordered_json j;
      j["context"] = context.to_json();
      j["devices"] = account::devices_json(r.run, r.accounting);
      j["tef"] = account::footprint_json(r.tef);
      j["stef"] = account::footprint_json(r.stef);
      nlohmann::ordered_json rule_texts = nlohmann::ordered_json::array();
      for (const auto& rule : rules) rule_texts.push_back(rule.text);
      j["summarize_rules"] = rule_texts;
      j["edd"] = account::edd_json(account::energy_distribution_diagram(r.tef));
      j["warnings"] = r.run.warnings;
      files.emplace_back(o.json_file, j.dump(2) + "\n");
    }
    if (!o.csv_file.empty()) {
      files.emplace_back(o.csv_file, account::footprint_csv(r.tef, context.to_csv_comments()));
    }
    if (!o.folded_file.empty()) {
      double idle = 0;
      for (const auto& d : r.accounting.devices) idle += d.idle_energy_j;
      files.emplace_back(o.folded_file, account::folded_stacks(r.tef, idle));
    }
    if (!o.perfetto_file.empty()) {
      files.emplace_back(o.perfetto_file,
                         account::perfetto_trace(r.run, r.accounting, context.to_json()));
    }
    write_files_atomically(files);
  }
  return result;
}

Footprint read_footprint_json(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InvalidInput(path + ": cannot open the footprint file for reading");
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw InvalidInput(path +
                       ": expected JSON written by `nnergy account --json`, found "
                       "unparsable text (" +
                       e.what() + ")");
  }
  const char* key = j.contains("stef") ? "stef" : "tef";
  if (!j.contains(key) || !j[key].contains("entries") || !j[key]["entries"].is_array()) {
    throw InvalidInput(path + ": expected \"stef\" or \"tef\" with \"entries\", found neither");
  }
  Footprint footprint;
  for (const auto& entry : j[key]["entries"]) {
    if (!entry.contains("name") || !entry["name"].is_string() || !entry.contains("energy_j") ||
        !entry["energy_j"].is_number()) {
      throw InvalidInput(path + ": expected entries with \"name\" and \"energy_j\", found " +
                         entry.dump().substr(0, 80));
    }
    account::FootprintEntry e;
    e.name = entry["name"].get<std::string>();
    e.energy_j = entry["energy_j"].get<double>();
    footprint.push_back(std::move(e));
  }
  return footprint;
}

}  // namespace

void add_account_command(CLI::App& app, CommandRun* selected, const std::string& command_line) {
  auto options = std::make_shared<AccountOptions>();
  CLI::App* command = app.add_subcommand(
      "account",
      "Attribute a run's measured energy to operators, layers and modules (seed 001 Smaragdine)");
  command->add_option("runs", options->runs,
                      "session directories written by nnergy_torch.session (session.json)");
  command
      ->add_option("--trace", options->traces,
                   "program trace: Chrome/Kineto JSON, torch 1.13 trace, TF1 timeline")
      ->allow_extra_args(false);
  command
      ->add_option("--power", options->powers,
                   "power trace: `nnergy monitor -o` CSV/JSON or nvidia-smi log")
      ->allow_extra_args(false);
  command->add_option("--offset-us", options->offset_us,
                      "UNIX time of the trace's ts 0, µs (overrides the trace's own base)");
  command
      ->add_option("--power-device", options->power_devices,
                   "assign a power source to a device: SOURCE=cpu|gpu:N|none")
      ->allow_extra_args(false);
  command->add_flag("--interpolate", options->interpolate,
                    "interpolate power linearly between samples (default: most recent sample)");
  command->add_option("--level", options->level, "EDD levels to print (default 2)");
  command->add_option("--top", options->top, "hotspots to print (default 10)");
  command
      ->add_option("--summarize", options->summarize,
                   "summarization rule REGEX=REPLACEMENT for self-similar layers (repeatable)")
      ->allow_extra_args(false);
  command->add_flag("--no-default-rules", options->no_default_rules,
                    "do not apply the default rules (layer_N, layers.N, blocks.N, h.N, layerN.M, "
                    "ProfilerStep#N)");
  command->add_option("--json", options->json_file, "write TEF, STEF, EDD and conservation JSON");
  command->add_option("--csv", options->csv_file, "write the TEF as CSV");
  command->add_option("--folded", options->folded_file,
                      "write folded stacks (integer µJ) for flamegraph.pl / speedscope");
  command->add_option("--perfetto", options->perfetto_file,
                      "write a Chrome/Perfetto trace with energy_j per event and power tracks");
  command->add_flag("--assess", options->assess,
                    "accounting similarity: ASSS (power decimated), ASSW and pairwise (runs)");
  command->add_option("--max-factor", options->max_factor,
                      "largest decimation factor for --assess (default 8)");
  auto compare = std::make_shared<CompareOptions>();
  CLI::App* compare_command = command->add_subcommand(
      "compare", "Accounting similarity (PCC) of two footprints written by --json");
  compare_command->add_option("first", compare->first, "footprint JSON")->required();
  compare_command->add_option("second", compare->second, "footprint JSON")->required();
  // The parent's callback runs after the subcommand's, so it decides which one runs.
  command->callback([selected, options, compare, compare_command, command_line] {
    if (!compare_command->parsed()) {
      *selected = [options, command_line] { return run_account(*options, command_line); };
      return;
    }
    *selected = [compare] {
      const Footprint a = read_footprint_json(compare->first);
      const Footprint b = read_footprint_json(compare->second);
      const double r = account::accounting_similarity(a, b);
      CommandResult result;
      result.output = fmt::format(
          "Accounting similarity (Pearson correlation of attributed energies over {} and {} "
          "names): {:.4f}\n",
          a.size(), b.size(), r);
      return result;
    };
  });
}

}  // namespace nnergy::cli
