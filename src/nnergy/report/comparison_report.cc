#include "nnergy/report/comparison_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <numeric>

#include "nnergy/core/csv.h"
#include "nnergy/core/error.h"
#include "nnergy/report/quantity_format.h"
#include "nnergy/report/text_table.h"

namespace nnergy::report {

namespace {

using nlohmann::ordered_json;

// "1.23 ms ± 0.45 ms", or "1.23 ms" without an uncertainty.
std::string with_std(double value, double std, std::string_view unit) {
  if (std <= 0) return format_quantity(value, unit);
  return format_quantity(value, unit) + " ± " + format_quantity(std, unit);
}

// Ranks (1-based, lowest value first) of the rows `members` by `value`.
template <typename Value, typename Rank>
void assign_ranks(std::vector<ComparisonRow>& rows, std::vector<std::size_t> members, Value value,
                  Rank rank) {
  std::stable_sort(members.begin(), members.end(),
                   [&](std::size_t a, std::size_t b) { return value(rows[a]) < value(rows[b]); });
  for (std::size_t i = 0; i < members.size(); ++i) rank(rows[members[i]]) = static_cast<int>(i + 1);
}

const ComparedDevice& device_of(const ComparisonReport& report, const std::string& id) {
  for (const ComparedDevice& d : report.devices)
    if (d.id == id) return d;
  throw InternalError("comparison row of an unknown device " + id);
}

std::string figures_text(const ComparedDevice& d) {
  return fmt::format("time {}, power {}", d.time_model, d.power_model);
}

// "P" on the Pareto front, "host" host-bound, "does not fit (N GiB)" or "may not fit (N GiB)".
std::string marks(const ComparisonRow& r) {
  std::vector<std::string> m;
  if (r.pareto) m.emplace_back("P");
  if (r.host_bound) m.emplace_back("host");
  if (!r.fits_memory) {
    m.push_back(fmt::format("does not fit ({})", format_binary_bytes(r.memory_peak_bytes)));
  }
  if (r.may_not_fit) {
    m.push_back(fmt::format("may not fit ({})", format_binary_bytes(r.memory_peak_bytes)));
  }
  std::string out;
  for (const std::string& s : m) out += (out.empty() ? "" : ",") + s;
  return out;
}

const ComparisonRow* optimal_row(const ComparisonReport& report, const ComparisonRow& boost) {
  for (const ComparisonRow& r : report.rows)
    if (r.energy_optimal_clock && r.device == boost.device && r.batch == boost.batch) return &r;
  return nullptr;
}

std::string batch_table(const ComparisonReport& report, std::int64_t batch) {
  std::vector<const ComparisonRow*> boost;
  for (const ComparisonRow& r : report.rows)
    if (r.batch == batch && !r.energy_optimal_clock) boost.push_back(&r);
  // Ranked rows first (by energy per sample), then the rows that do not fit.
  std::stable_sort(boost.begin(), boost.end(), [](const ComparisonRow* a, const ComparisonRow* b) {
    if ((a->rank_energy == 0) != (b->rank_energy == 0)) return a->rank_energy != 0;
    return a->rank_energy < b->rank_energy;
  });
  TextTable table;
  using A = TextTable::Align;
  for (const auto& [header, align] :
       std::vector<std::pair<std::string, A>>{{"#", A::kRight},
                                              {"device", A::kLeft},
                                              {"clock MHz", A::kRight},
                                              {"time/sample", A::kRight},
                                              {"energy/sample", A::kRight},
                                              {"power", A::kRight},
                                              {"EDP/iter", A::kRight},
                                              {"", A::kLeft},
                                              {"|", A::kLeft},
                                              {"E-opt MHz", A::kRight},
                                              {"time/sample", A::kRight},
                                              {"energy/sample", A::kRight},
                                              {"power", A::kRight},
                                              {"", A::kLeft},
                                              {"figures", A::kLeft}}) {
    table.add_column(header, align);
  }
  for (const ComparisonRow* r : boost) {
    const ComparisonRow* opt = optimal_row(report, *r);
    const double b = static_cast<double>(r->batch);
    table.add_row({r->rank_energy > 0 ? std::to_string(r->rank_energy) : "-", r->device,
                   fmt::format("{:g}", r->clock_mhz),
                   with_std(r->time_per_sample_s(), r->time_std_s / b, "s"),
                   with_std(r->energy_per_sample_j(), r->energy_std_j / b, "J"),
                   format_quantity(r->power_w, "W"), format_quantity(r->edp_j_s, "J·s"), marks(*r),
                   "|", opt ? fmt::format("{:g}", opt->clock_mhz) : "-",
                   opt ? format_quantity(opt->time_per_sample_s(), "s") : "-",
                   opt ? format_quantity(opt->energy_per_sample_j(), "J") : "-",
                   opt ? format_quantity(opt->power_w, "W") : "-", opt ? marks(*opt) : "",
                   figures_text(device_of(report, r->device))});
  }
  return table.render();
}

ordered_json row_json(const ComparisonRow& r) {
  const double b = static_cast<double>(r.batch);
  return {{"device", r.device},
          {"batch", r.batch},
          {"clock", r.energy_optimal_clock ? "energy-optimal" : "boost"},
          {"clock_mhz", r.clock_mhz},
          {"fits_memory", r.fits_memory},
          {"may_not_fit", r.may_not_fit},
          {"memory_peak_bytes", r.memory_peak_bytes},
          {"host_bound", r.host_bound},
          {"time_s", r.time_s},
          {"time_std_s", r.time_std_s},
          {"time_per_sample_s", r.time_per_sample_s()},
          {"energy_j", r.energy_j},
          {"energy_std_j", r.energy_std_j},
          {"energy_per_sample_j", r.energy_per_sample_j()},
          {"energy_per_sample_std_j", r.energy_std_j / b},
          {"power_w", r.power_w},
          {"edp_j_s", r.edp_j_s},
          {"edp_std_j_s", r.edp_std_j_s},
          {"pareto", r.pareto},
          {"rank_time", r.rank_time},
          {"rank_energy", r.rank_energy},
          {"rank_edp", r.rank_edp},
          {"rank_power", r.rank_power}};
}

ordered_json device_json(const ComparedDevice& d) {
  return {{"id", d.id},
          {"name", d.name},
          {"generation", d.generation},
          {"time_model", d.time_model},
          {"provenance", d.provenance},
          {"power_model", d.power_model},
          {"power_provenance", d.power_provenance},
          {"memory_bytes", d.memory_bytes},
          {"relative_time_std", d.relative_time_std},
          {"largest_fitting_batch", d.largest_fitting_batch ? ordered_json(*d.largest_fitting_batch)
                                                            : ordered_json(nullptr)}};
}

}  // namespace

void rank_rows(std::vector<ComparisonRow>& rows) {
  // Groups: (batch, clock kind) for ranks; batch for the Pareto front.
  std::map<std::pair<std::int64_t, bool>, std::vector<std::size_t>> groups;
  std::map<std::int64_t, std::vector<std::size_t>> by_batch;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    ComparisonRow& r = rows[i];
    r.pareto = false;
    r.rank_time = r.rank_energy = r.rank_edp = r.rank_power = 0;
    if (!r.fits_memory) continue;
    groups[{r.batch, r.energy_optimal_clock}].push_back(i);
    by_batch[r.batch].push_back(i);
  }
  for (const auto& [key, members] : groups) {
    assign_ranks(
        rows, members, [](const ComparisonRow& r) { return r.time_per_sample_s(); },
        [](ComparisonRow& r) -> int& { return r.rank_time; });
    assign_ranks(
        rows, members, [](const ComparisonRow& r) { return r.energy_per_sample_j(); },
        [](ComparisonRow& r) -> int& { return r.rank_energy; });
    assign_ranks(
        rows, members, [](const ComparisonRow& r) { return r.edp_j_s; },
        [](ComparisonRow& r) -> int& { return r.rank_edp; });
    assign_ranks(
        rows, members, [](const ComparisonRow& r) { return r.power_w; },
        [](ComparisonRow& r) -> int& { return r.rank_power; });
  }
  for (const auto& [batch, members] : by_batch) {
    for (std::size_t i : members) {
      const ComparisonRow& a = rows[i];
      const bool dominated = std::any_of(members.begin(), members.end(), [&](std::size_t j) {
        const ComparisonRow& b = rows[j];
        const bool no_worse = b.time_s <= a.time_s && b.energy_j <= a.energy_j;
        const bool better = b.time_s < a.time_s || b.energy_j < a.energy_j;
        return j != i && no_worse && better;
      });
      rows[i].pareto = !dominated;
    }
  }
}

std::string render_text(const ComparisonReport& report) {
  std::string out = fmt::format(
      "{} {} {} on {} devices — every figure is predicted by the analytical model, not measured; "
      "± is 1σ\n",
      report.network, report.mode, report.precision, report.devices.size());
  for (std::int64_t batch : report.batches) {
    out += fmt::format(
        "\nbatch {}: ranked by energy per sample at the boost clock; E-opt: the device's own "
        "energy-optimal clock; P: on the time/energy Pareto front; host: host-bound (the CPU "
        "issues kernels more slowly than the GPU runs them)\n",
        batch);
    out += batch_table(report, batch);
  }
  std::vector<std::string> limits;
  for (const ComparedDevice& d : report.devices) {
    if (d.largest_fitting_batch) {
      limits.push_back(fmt::format("{} {} ({})", d.id, *d.largest_fitting_batch,
                                   format_binary_bytes(d.memory_bytes)));
    }
  }
  if (!limits.empty()) {
    out +=
        "\nlargest batch that fits in device memory (estimate): " + join_with_commas(limits) + "\n";
  }
  // The provenance sentences, each once, with the devices they apply to.
  std::map<std::string, std::vector<std::string>> provenance;
  for (const ComparedDevice& d : report.devices) provenance[d.provenance].push_back(d.id);
  out += "\nwhere each device's time model comes from:\n";
  for (const auto& [sentence, ids] : provenance)
    out += fmt::format("  {}: {}\n", join_with_commas(ids), sentence);
  if (!report.notes.empty()) {
    out += "\nnotes:\n";
    for (const std::string& note : report.notes) out += "  - " + note + "\n";
  }
  return out;
}

ordered_json to_json(const ComparisonReport& report) {
  ordered_json j;
  j["context"] = report.context.to_json();
  j["network"] = report.network;
  j["mode"] = report.mode;
  j["precision"] = report.precision;
  j["batches"] = report.batches;
  ordered_json devices = ordered_json::array();
  for (const ComparedDevice& d : report.devices) devices.push_back(device_json(d));
  j["devices"] = std::move(devices);
  ordered_json rows = ordered_json::array();
  for (const ComparisonRow& r : report.rows) rows.push_back(row_json(r));
  j["rows"] = std::move(rows);
  j["notes"] = report.notes;
  return j;
}

std::string render_csv(const ComparisonReport& report) {
  std::string out = report.context.to_csv_comments();
  out +=
      "device,batch,clock,clock_mhz,fits_memory,may_not_fit,memory_peak_bytes,host_bound,time_s,"
      "time_std_s,"
      "time_per_sample_s,energy_j,energy_std_j,energy_per_sample_j,power_w,edp_j_s,pareto,"
      "rank_time,rank_energy,rank_edp,rank_power,time_model,power_model,provenance\n";
  for (const ComparisonRow& r : report.rows) {
    const ComparedDevice& d = device_of(report, r.device);
    out += fmt::format(
        "{},{},{},{:g},{},{},{:.17g},{},{:.17g},{:.17g},{:.17g},{:.17g},{:.17g},{:.17g},{:.17g},"
        "{:.17g},{},{},{},{},{},{},{},{}\n",
        csv::field(r.device), r.batch, r.energy_optimal_clock ? "energy-optimal" : "boost",
        r.clock_mhz, r.fits_memory, r.may_not_fit, r.memory_peak_bytes, r.host_bound, r.time_s,
        r.time_std_s, r.time_per_sample_s(), r.energy_j, r.energy_std_j, r.energy_per_sample_j(),
        r.power_w, r.edp_j_s, r.pareto, r.rank_time, r.rank_energy, r.rank_edp, r.rank_power,
        csv::field(d.time_model), csv::field(d.power_model), csv::field(d.provenance));
  }
  return out;
}

}  // namespace nnergy::report
