#include "nnergy/fleet/slurm_job_lookup.h"

#include <algorithm>
#include <fstream>
#include <iterator>
#include <regex>

#include "nnergy/core/text.h"

namespace nnergy::fleet {

namespace {

bool is_job_id(const std::string& text) {
  return !text.empty() && text.size() <= 20 &&
         std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

}  // namespace

std::optional<std::string> slurm_job_of_process(unsigned int pid,
                                                const std::filesystem::path& proc_root) {
  const std::filesystem::path dir = proc_root / std::to_string(pid);
  {
    std::ifstream environ(dir / "environ", std::ios::binary);
    const std::string prefix = "SLURM_JOB_ID=";
    for (std::string entry; std::getline(environ, entry, '\0');) {
      if (entry.rfind(prefix, 0) == 0 && is_job_id(entry.substr(prefix.size()))) {
        return entry.substr(prefix.size());
      }
    }
  }
  std::ifstream cgroup(dir / "cgroup");
  static const std::regex job_component("/job_([0-9]+)(/|$)");
  for (std::string line; std::getline(cgroup, line);) {
    std::smatch match;
    if (std::regex_search(line, match, job_component)) return match[1].str();
  }
  return std::nullopt;
}

std::vector<std::string> jobs_in_mapping_dir(const std::filesystem::path& directory,
                                             unsigned int gpu_index) {
  std::vector<std::string> jobs;
  std::ifstream in(directory / std::to_string(gpu_index));
  for (std::string line; std::getline(in, line);) {
    const std::string id(trim(line));
    if (is_job_id(id)) jobs.push_back(id);
  }
  return jobs;
}

std::string slurm_job_label(std::vector<std::string> jobs) {
  std::sort(jobs.begin(), jobs.end(), [](const std::string& a, const std::string& b) {
    return a.size() != b.size() ? a.size() < b.size() : a < b;
  });
  jobs.erase(std::unique(jobs.begin(), jobs.end()), jobs.end());
  std::string label;
  for (const std::string& job : jobs) label += (label.empty() ? "" : ",") + job;
  return label;
}

}  // namespace nnergy::fleet
