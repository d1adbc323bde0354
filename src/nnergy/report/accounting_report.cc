#include "nnergy/report/accounting_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "nnergy/account/footprint_writers.h"
#include "nnergy/core/json_text.h"
#include "nnergy/report/quantity_format.h"
#include "nnergy/report/text_table.h"

namespace nnergy::report {

namespace {

using account::EddNode;
using account::FootprintEntry;
using Align = TextTable::Align;

std::string joules(double j) { return format_quantity(j, "J"); }
std::string seconds(double s) { return format_quantity(s, "s"); }
std::string percent(double part, double whole) {
  return whole > 0 ? fmt::format("{:.1f} %", 100.0 * part / whole) : std::string("-");
}
std::string similarity_text(double r) {
  return std::isnan(r) ? std::string("undefined") : fmt::format("{:.3f}", r);
}

// How many of `count` rows a table lists under `top` (0: all).
std::size_t shown_rows(std::size_t count, std::size_t top) {
  return top == 0 ? count : std::min(top, count);
}

// The line under a table that left out `count` rows; nothing when none was.
std::string left_out_line(std::size_t count, const std::string& what,
                          const AccountingTextOptions& options) {
  if (count == 0) return "";
  return fmt::format("… {} more {} ({} lists all)\n", count, what,
                     setting_with_value(options.names, "top", "0"));
}

struct EddRow {
  const EddNode* node;
  std::size_t parent;  ///< row index; the root is its own parent
  std::size_t depth;
};

void collect_edd_rows(const EddNode& node, std::size_t parent, std::size_t depth,
                      std::size_t max_depth, std::vector<EddRow>& rows) {
  const std::size_t index = rows.size();
  rows.push_back({&node, parent, depth});
  if (depth >= max_depth) return;
  for (const EddNode& child : node.children) {
    collect_edd_rows(child, index, depth + 1, max_depth, rows);
  }
}

// The EDD table: the total, then its `top` largest nodes with every parent of theirs, in tree
// order (a parent holds at least its children's energy, so the largest nodes are mostly whole
// upper levels).
std::string edd_text(const EddNode& edd, const AccountingTextOptions& options) {
  std::vector<EddRow> rows;
  collect_edd_rows(edd, 0, 0, options.level, rows);
  std::vector<bool> kept(rows.size(), true);
  const std::size_t below_total = rows.size() - 1;
  if (shown_rows(below_total, options.top) < below_total) {
    std::vector<std::size_t> by_energy(below_total);
    std::iota(by_energy.begin(), by_energy.end(), 1);
    std::stable_sort(by_energy.begin(), by_energy.end(), [&](std::size_t a, std::size_t b) {
      return rows[a].node->energy_j > rows[b].node->energy_j;
    });
    std::fill(kept.begin() + 1, kept.end(), false);
    for (std::size_t k = 0; k < options.top; ++k) {
      for (std::size_t i = by_energy[k]; !kept[i]; i = rows[i].parent) kept[i] = true;
    }
  }
  TextTable table;
  table.add_column("unit (EDD, summarized)", Align::kLeft);
  table.add_column("attributed energy", Align::kRight);
  table.add_column("share of parent", Align::kRight);
  table.add_column("parent", Align::kLeft);
  table.add_column("exclusive time", Align::kRight);
  std::size_t left_out = 0;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (!kept[i]) {
      ++left_out;
      continue;
    }
    const EddNode& node = *rows[i].node;
    const EddNode& parent = *rows[rows[i].parent].node;
    const bool root = i == 0;
    table.add_row({std::string(2 * rows[i].depth, ' ') + node.name, joules(node.energy_j),
                   root ? std::string("100.0 %") : percent(node.energy_j, parent.energy_j),
                   root ? std::string("") : parent.name, seconds(node.time_s)});
  }
  return fmt::format("Energy distribution diagram (levels <= {}):\n", options.level) +
         table.render() + left_out_line(left_out, "units", options);
}

std::string hotspots_text(const AccountedRun& r, double total_energy_j,
                          const AccountingTextOptions& options) {
  std::vector<const FootprintEntry*> by_energy;
  for (const FootprintEntry& e : r.stef) by_energy.push_back(&e);
  std::vector<const FootprintEntry*> by_power = by_energy;
  std::stable_sort(by_energy.begin(), by_energy.end(),
                   [](auto* a, auto* b) { return a->energy_j > b->energy_j; });
  std::stable_sort(by_power.begin(), by_power.end(),
                   [](auto* a, auto* b) { return a->power_w() > b->power_w(); });
  const std::size_t n_top = shown_rows(by_energy.size(), options.top);
  const std::size_t left_out = by_energy.size() - n_top;
  TextTable hot;
  hot.add_column("energy hotspot (STEF)", Align::kLeft);
  hot.add_column("attributed energy", Align::kRight);
  hot.add_column("share", Align::kRight);
  hot.add_column("exclusive time", Align::kRight);
  hot.add_column("events", Align::kRight);
  for (std::size_t k = 0; k < n_top; ++k) {
    const FootprintEntry* e = by_energy[k];
    hot.add_row({e->name, joules(e->energy_j), percent(e->energy_j, total_energy_j),
                 seconds(e->time_s), std::to_string(e->event_count)});
  }
  std::string out = fmt::format("\nTop {} energy hotspots:\n", n_top) + hot.render() +
                    left_out_line(left_out, "hotspots", options);
  TextTable hot_power;
  hot_power.add_column("power hotspot (STPF)", Align::kLeft);
  hot_power.add_column("attributed power", Align::kRight);
  hot_power.add_column("attributed energy", Align::kRight);
  hot_power.add_column("exclusive time", Align::kRight);
  for (std::size_t k = 0; k < n_top; ++k) {
    const FootprintEntry* e = by_power[k];
    hot_power.add_row(
        {e->name, format_quantity(e->power_w(), "W"), joules(e->energy_j), seconds(e->time_s)});
  }
  out += fmt::format("\nTop {} power hotspots (attributed energy / exclusive time):\n", n_top) +
         hot_power.render() + left_out_line(left_out, "hotspots", options);
  return out;
}

std::string passes_text(const AccountedRun& r) {
  double forward = 0, backward = 0, other = 0;
  for (const FootprintEntry& e : r.tef) {
    forward += e.forward_energy_j;
    backward += e.backward_energy_j;
    other += e.other_energy_j;
  }
  const double attributed = forward + backward + other;
  return fmt::format("\nPasses (attributed): forward {} ({}), backward {} ({}), other {} ({})\n",
                     joules(forward), percent(forward, attributed), joules(backward),
                     percent(backward, attributed), joules(other), percent(other, attributed));
}

std::string conservation_text(const AccountedRun& r) {
  std::string out = "\nConservation per device (measured over the device's event window):\n";
  double measured_total = 0, attributed_total = 0, idle_total = 0, unmeasured_total = 0;
  for (const account::DeviceAccount& d : r.accounting.devices) {
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
  for (const account::AccountRun::PowerRange& range : r.run.power_ranges) {
    out += fmt::format("  {} power trace: {} measured over {} in all (the window is part of it)\n",
                       range.device, joules(range.energy_j), seconds(range.end_s - range.start_s));
  }
  out += fmt::format(
      "Conservation: attributed {} + idle {} = measured {} (difference {}); unmeasured event "
      "time {}\n",
      joules(attributed_total), joules(idle_total), joules(measured_total),
      joules(attributed_total + idle_total - measured_total), seconds(unmeasured_total));
  return out;
}

std::string run_text(const AccountedRun& r, bool interpolate,
                     const AccountingTextOptions& options) {
  const account::AccountRun& run = r.run;
  std::string formats;
  for (const std::string& f : run.trace_formats) formats += (formats.empty() ? "" : ", ") + f;
  std::string assigned;
  for (const account::PowerTimeline& t : run.power) {
    for (const std::string& id : t.source_ids) {
      assigned += (assigned.empty() ? "" : ", ") + id + " -> " + t.device;
    }
  }
  std::string out = fmt::format(
      "Energy accounting of {} ({} trace, {} events); all energies are measured "
      "power attributed to events\n",
      run.label, formats, run.events.size());
  out += fmt::format("Time base: accounting time 0 = UNIX time {:.6f} s; power: {}\n",
                     run.base_epoch_s, assigned.empty() ? std::string("none assigned") : assigned);
  out += fmt::format("Alignment: {} power between samples, equal split among concurrent events\n\n",
                     interpolate ? "interpolated" : "most recent sample's (recency)");
  if (has_no_power(r)) {
    out +=
        "No energy attributed: no device of this run has power samples (see the warnings), so "
        "there is no energy distribution, hotspot or pass to list\n";
  } else {
    const EddNode edd = account::energy_distribution_diagram(r.stef);
    out += edd_text(edd, options);
    out += hotspots_text(r, edd.energy_j, options);
    out += passes_text(r);
  }
  out += conservation_text(r);
  if (!run.warnings.empty()) {
    out += fmt::format("\nWarnings ({}):\n", run.warnings.size());
    for (const std::string& w : run.warnings) out += "  " + w + "\n";
  }
  return out;
}

std::string assessment_text(const AccountingReport& report) {
  std::string out = "\nAccounting precision (Smaragdine §5.4; PCC of attributed STEFs):\n";
  for (const AccountedRun& r : report.runs) {
    std::string line;
    for (const account::SparsingPoint& p : r.sparsing) {
      line += fmt::format("{}x {}  ", p.factor, similarity_text(p.similarity));
    }
    out += fmt::format("  ASSS {} (power samples decimated): {}\n", r.run.label, line);
  }
  if (report.runs.size() < 2) {
    return out + "  ASSW and pairwise similarity need two or more RUN directories\n";
  }
  std::string line;
  for (std::size_t k = 0; k < report.assessment->widening.size(); ++k) {
    line += fmt::format("runs 1..{} {}  ", k + 2, similarity_text(report.assessment->widening[k]));
  }
  out += "  ASSW (run 1 vs runs merged): " + line + "\n";
  TextTable matrix;
  matrix.add_column("PCC", Align::kLeft);
  for (const AccountedRun& r : report.runs) matrix.add_column(r.run.label, Align::kRight);
  for (std::size_t i = 0; i < report.runs.size(); ++i) {
    std::vector<std::string> row{report.runs[i].run.label};
    for (double v : report.assessment->pairwise[i]) row.push_back(similarity_text(v));
    matrix.add_row(std::move(row));
  }
  return out + "  Pairwise similarity across runs:\n" + matrix.render();
}

}  // namespace

bool has_no_power(const AccountedRun& run) {
  return !run.accounting.devices.empty() &&
         std::none_of(run.accounting.devices.begin(), run.accounting.devices.end(),
                      [](const account::DeviceAccount& d) { return d.has_power; });
}

std::string render_text(const AccountingReport& report, const AccountingTextOptions& options) {
  std::string out;
  for (std::size_t i = 0; i < report.runs.size(); ++i) {
    if (i > 0) out += "\n";
    out += run_text(report.runs[i], report.interpolate, options);
  }
  if (report.assessment) out += assessment_text(report);
  return out;
}

namespace {

// A similarity as JSON: null where it is undefined (NaN).
nlohmann::ordered_json similarity_json(double similarity) {
  return std::isfinite(similarity) ? nlohmann::ordered_json(similarity) : nlohmann::ordered_json();
}

nlohmann::ordered_json run_json(const AccountingReport& report, const AccountedRun& a,
                                const RunContext& context) {
  nlohmann::ordered_json doc =
      account::accounting_json(a.run, a.accounting, a.tef, a.stef, report.rules, context);
  doc["label"] = a.run.label;
  doc["trace_formats"] = a.run.trace_formats;
  doc["has_power"] = !has_no_power(a);
  if (!a.sparsing.empty()) {
    nlohmann::ordered_json points = nlohmann::ordered_json::array();
    for (const account::SparsingPoint& p : a.sparsing)
      points.push_back({{"factor", p.factor}, {"similarity", similarity_json(p.similarity)}});
    doc["sparsing"] = std::move(points);
  }
  return doc;
}

}  // namespace

nlohmann::ordered_json to_json(const AccountingReport& report) {
  if (report.runs.size() == 1) return run_json(report, report.runs.front(), report.context);
  nlohmann::ordered_json j;
  j["context"] = report.context.to_json();
  j["runs"] = nlohmann::ordered_json::array();
  for (const AccountedRun& a : report.runs)
    j["runs"].push_back(run_json(report, a, report.context));
  if (report.assessment) {
    nlohmann::ordered_json pairwise = nlohmann::ordered_json::array();
    for (const std::vector<double>& row : report.assessment->pairwise) {
      nlohmann::ordered_json r = nlohmann::ordered_json::array();
      for (double s : row) r.push_back(similarity_json(s));
      pairwise.push_back(std::move(r));
    }
    nlohmann::ordered_json widening = nlohmann::ordered_json::array();
    for (double s : report.assessment->widening) widening.push_back(similarity_json(s));
    j["assessment"] = {{"widening", std::move(widening)}, {"pairwise", std::move(pairwise)}};
  }
  return j;
}

std::string render_text(const FootprintComparison& comparison) {
  return fmt::format(
      "Accounting similarity (Pearson correlation of attributed energies over {} and {} "
      "names): {:.4f}\n",
      comparison.first_names, comparison.second_names, comparison.similarity);
}

}  // namespace nnergy::report
