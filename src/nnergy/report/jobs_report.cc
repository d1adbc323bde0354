#include "nnergy/report/jobs_report.h"

#include <fmt/format.h>

#include "nnergy/core/csv.h"
#include "nnergy/report/text_table.h"

namespace nnergy::report {

namespace {

constexpr double kJoulesPerKwh = 3.6e6;

std::string joined(const std::vector<std::string>& items) {
  std::string text;
  for (const std::string& item : items) text += (text.empty() ? "" : ",") + item;
  return text;
}

std::string dash_if_empty(const std::string& text) { return text.empty() ? "-" : text; }

TextTable group_table(const std::string& what, const std::vector<fleet::EnergyGroupRow>& rows) {
  TextTable table;
  table.add_column(what, TextTable::Align::kLeft);
  table.add_column("jobs", TextTable::Align::kRight);
  table.add_column("energy J", TextTable::Align::kRight);
  table.add_column("energy kWh", TextTable::Align::kRight);
  for (const fleet::EnergyGroupRow& row : rows) {
    table.add_row({dash_if_empty(row.name), std::to_string(row.jobs),
                   fmt::format("{:.1f}", row.energy_j),
                   fmt::format("{:.6f}", row.energy_j / kJoulesPerKwh)});
  }
  return table;
}

nlohmann::ordered_json groups_json(const std::vector<fleet::EnergyGroupRow>& rows) {
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const fleet::EnergyGroupRow& row : rows) {
    list.push_back({{"name", row.name}, {"jobs", row.jobs}, {"energy_j", row.energy_j}});
  }
  return list;
}

}  // namespace

std::string render_text(const JobsReport& report) {
  const fleet::JobsSummary& s = report.summary;
  std::string text = fmt::format("GPU energy of Slurm jobs in {}: {} jobs, {} step records\n\n",
                                 report.records_dir, s.jobs.size(), s.records);
  TextTable jobs;
  for (const char* column : {"job", "array", "user", "partition", "nodes"}) {
    jobs.add_column(column, TextTable::Align::kLeft);
  }
  for (const char* column : {"steps", "GPUs", "time s", "energy J", "energy kWh"}) {
    jobs.add_column(column, TextTable::Align::kRight);
  }
  for (const fleet::JobEnergyRow& j : s.jobs) {
    jobs.add_row({j.job_id, j.array_job_id.empty() ? "-" : j.array_job_id + "_" + j.array_task_id,
                  dash_if_empty(j.user), dash_if_empty(j.partition), joined(j.nodes),
                  std::to_string(j.steps), std::to_string(j.gpus),
                  fmt::format("{:.1f}", j.end_epoch_s - j.start_epoch_s),
                  fmt::format("{:.1f}", j.energy_j),
                  fmt::format("{:.6f}", j.energy_j / kJoulesPerKwh)});
  }
  text += jobs.render() + "\n" + group_table("user", s.users).render() + "\n" +
          group_table("partition", s.partitions).render() + "\n";
  text += fmt::format("Total  {:.1f} J ({:.6f} kWh)\n", s.energy_j, s.energy_j / kJoulesPerKwh);
  return text;
}

nlohmann::ordered_json to_json(const JobsReport& report) {
  const fleet::JobsSummary& s = report.summary;
  nlohmann::ordered_json j;
  j["context"] = report.context.to_json();
  j["records_dir"] = report.records_dir;
  j["energy_j"] = s.energy_j;
  j["records"] = s.records;
  j["jobs"] = nlohmann::ordered_json::array();
  for (const fleet::JobEnergyRow& row : s.jobs) {
    j["jobs"].push_back({{"job_id", row.job_id},
                         {"array_job_id", row.array_job_id},
                         {"array_task_id", row.array_task_id},
                         {"user", row.user},
                         {"partition", row.partition},
                         {"nodes", row.nodes},
                         {"steps", row.steps},
                         {"gpus", row.gpus},
                         {"start_epoch_s", row.start_epoch_s},
                         {"end_epoch_s", row.end_epoch_s},
                         {"energy_j", row.energy_j}});
  }
  j["users"] = groups_json(s.users);
  j["partitions"] = groups_json(s.partitions);
  return j;
}

std::string render_csv(const JobsReport& report) {
  std::string text = report.context.to_csv_comments();
  text +=
      "job_id,array_job_id,array_task_id,user,partition,nodes,steps,gpus,start_epoch_s,"
      "end_epoch_s,energy_j\n";
  for (const fleet::JobEnergyRow& row : report.summary.jobs) {
    text +=
        fmt::format("{},{},{},{},{},{},{},{},{:.3f},{:.3f},{:.3f}\n", csv::field(row.job_id),
                    csv::field(row.array_job_id), csv::field(row.array_task_id),
                    csv::field(row.user), csv::field(row.partition), csv::field(joined(row.nodes)),
                    row.steps, row.gpus, row.start_epoch_s, row.end_epoch_s, row.energy_j);
  }
  return text;
}

}  // namespace nnergy::report
