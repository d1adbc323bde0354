#include "nnergy/fleet/job_summary.h"

#include <algorithm>
#include <map>
#include <set>

namespace nnergy::fleet {

namespace {

bool matches(const JobEnergyRecord& r, const JobFilter& f) {
  return (f.user.empty() || r.user == f.user) &&
         (f.partition.empty() || r.partition == f.partition) &&
         (f.job_id.empty() || r.job_id == f.job_id || r.array_job_id == f.job_id);
}

std::vector<EnergyGroupRow> sorted_groups(const std::map<std::string, EnergyGroupRow>& groups) {
  std::vector<EnergyGroupRow> rows;
  for (const auto& [name, row] : groups) rows.push_back(row);
  std::stable_sort(rows.begin(), rows.end(), [](const EnergyGroupRow& a, const EnergyGroupRow& b) {
    return a.energy_j > b.energy_j;
  });
  return rows;
}

}  // namespace

JobsSummary summarize_jobs(const std::vector<JobEnergyRecord>& all, const JobFilter& filter) {
  std::vector<JobEnergyRecord> records;
  for (const JobEnergyRecord& r : all) {
    if (matches(r, filter)) records.push_back(r);
  }
  JobsSummary summary;
  summary.records = static_cast<int>(records.size());
  std::map<std::string, JobEnergyRow> jobs;
  std::map<std::string, std::set<std::string>> gpus;
  std::map<std::string, std::set<std::string>> nodes;
  for (const JobEnergyRecord& r : records) {
    auto [it, inserted] = jobs.try_emplace(r.job_id);
    JobEnergyRow& row = it->second;
    if (inserted) {
      row.job_id = r.job_id;
      row.array_job_id = r.array_job_id;
      row.array_task_id = r.array_task_id;
      row.user = r.user;
      row.partition = r.partition;
      row.start_epoch_s = r.start_epoch_s;
      row.end_epoch_s = r.end_epoch_s;
    }
    ++row.steps;
    row.start_epoch_s = std::min(row.start_epoch_s, r.start_epoch_s);
    row.end_epoch_s = std::max(row.end_epoch_s, r.end_epoch_s);
    nodes[r.job_id].insert(r.node);
    for (const GpuStepEnergy& g : r.gpus) {
      gpus[r.job_id].insert(g.uuid.empty() ? r.node + ":" + std::to_string(g.index) : g.uuid);
    }
  }
  std::map<std::string, EnergyGroupRow> users;
  std::map<std::string, EnergyGroupRow> partitions;
  for (auto& [id, row] : jobs) {
    row.energy_j = job_energy_j(records, id);
    row.gpus = static_cast<int>(gpus[id].size());
    row.nodes.assign(nodes[id].begin(), nodes[id].end());
    summary.energy_j += row.energy_j;
    for (auto* group : {&users[row.user], &partitions[row.partition]}) {
      ++group->jobs;
      group->energy_j += row.energy_j;
    }
    users[row.user].name = row.user;
    partitions[row.partition].name = row.partition;
    summary.jobs.push_back(row);
  }
  std::stable_sort(summary.jobs.begin(), summary.jobs.end(),
                   [](const JobEnergyRow& a, const JobEnergyRow& b) {
                     if (a.start_epoch_s != b.start_epoch_s)
                       return a.start_epoch_s < b.start_epoch_s;
                     return a.job_id.size() != b.job_id.size() ? a.job_id.size() < b.job_id.size()
                                                               : a.job_id < b.job_id;
                   });
  summary.users = sorted_groups(users);
  summary.partitions = sorted_groups(partitions);
  return summary;
}

}  // namespace nnergy::fleet
