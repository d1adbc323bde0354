#include "nnergy/fleet/slurm_job_lookup.h"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <regex>
#include <sstream>

#include "nnergy/core/text.h"
#include "nnergy/fleet/program_run.h"

namespace nnergy::fleet {

namespace {

bool is_job_id(const std::string& text) {
  return !text.empty() && text.size() <= 20 &&
         std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// The real uid of the process whose /proc directory is `dir` (its status's "Uid:" line).
std::optional<unsigned int> real_uid(const std::filesystem::path& dir) {
  std::ifstream status(dir / "status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("Uid:", 0) != 0) continue;
    std::istringstream fields(line.substr(4));
    unsigned int uid = 0;
    if (fields >> uid) return uid;
    return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> slurm_job_of_process(unsigned int pid, const JobOwner& owner_of,
                                                const std::filesystem::path& proc_root) {
  const std::filesystem::path dir = proc_root / std::to_string(pid);
  {
    std::ifstream cgroup(dir / "cgroup");
    if (!cgroup) return std::nullopt;  // gone
    static const std::regex job_component("/job_([0-9]+)(/|$)");
    bool in_slurm = false;
    for (std::string line; std::getline(cgroup, line);) {
      std::smatch match;
      if (std::regex_search(line, match, job_component)) return match[1].str();
      in_slurm |= line.find("/slurm") != std::string::npos;
    }
    if (in_slurm) return std::nullopt;
  }
  if (!owner_of) return std::nullopt;
  std::optional<std::string> job;
  {
    std::ifstream environ(dir / "environ", std::ios::binary);
    const std::string prefix = "SLURM_JOB_ID=";
    for (std::string entry; std::getline(environ, entry, '\0');) {
      if (entry.rfind(prefix, 0) == 0 && is_job_id(entry.substr(prefix.size()))) {
        job = entry.substr(prefix.size());
        break;
      }
    }
  }
  if (!job) return std::nullopt;
  const std::optional<unsigned int> uid = real_uid(dir);
  const std::optional<unsigned int> owner = owner_of(*job);
  if (!uid || !owner || *uid != *owner) return std::nullopt;
  return job;
}

JobOwner scontrol_job_owner(std::filesystem::path scontrol) {
  struct Cache {
    std::mutex mutex;
    std::map<std::string, unsigned int> owners;
  };
  auto cache = std::make_shared<Cache>();
  return [scontrol = std::move(scontrol),
          cache](const std::string& job) -> std::optional<unsigned int> {
    {
      std::lock_guard<std::mutex> lock(cache->mutex);
      const auto found = cache->owners.find(job);
      if (found != cache->owners.end()) return found->second;
    }
    if (!is_job_id(job)) return std::nullopt;
    const ProgramRun run = run_program({scontrol.string(), "show", "job", "-o", job}, 5.0, 1 << 16);
    if (!run.ok()) return std::nullopt;
    static const std::regex user_id(R"((?:^|\s)UserId=[^\s(]*\(([0-9]+)\))");
    std::smatch match;
    if (!std::regex_search(run.out, match, user_id)) return std::nullopt;
    unsigned int uid = 0;
    const std::string text = match[1].str();
    if (std::from_chars(text.data(), text.data() + text.size(), uid).ec != std::errc()) {
      return std::nullopt;
    }
    std::lock_guard<std::mutex> lock(cache->mutex);
    cache->owners[job] = uid;
    return uid;
  };
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
