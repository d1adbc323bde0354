#include "nnergy/fleet/job_energy_record.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "nnergy/core/atomic_file.h"
#include "nnergy/core/error.h"
#include "nnergy/core/json_document.h"

namespace nnergy::fleet {

namespace {

constexpr const char* kSchema = "nnergy-job-energy/1";

// The value at `key`, without copying it.
const nlohmann::json& required_value(const nlohmann::json& j, const char* key,
                                     const std::string& where) {
  if (!j.is_object() || !j.contains(key)) {
    throw InvalidInput(
        fmt::format("{}: expected key \"{}\" of an nnergy job energy record", where, key));
  }
  return j.at(key);
}

template <typename T>
T required(const nlohmann::json& j, const char* key, const std::string& where) {
  const nlohmann::json& value = required_value(j, key, where);
  try {
    return value.get<T>();
  } catch (const nlohmann::json::exception&) {
    throw InvalidInput(
        fmt::format("{}: \"{}\" has the wrong type ({})", where, key, value.type_name()));
  }
}

// A file name part: keeps letters, digits, '-' and '.', so that ids from the environment cannot
// leave the directory.
std::string safe(const std::string& text) {
  std::string out;
  for (const char ch : text) {
    const bool keep = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                      (ch >= '0' && ch <= '9') || ch == '-' || ch == '.';
    out += keep ? ch : '_';
  }
  return out;
}

}  // namespace

double JobEnergyRecord::energy_j() const {
  double total = 0;
  for (const GpuStepEnergy& gpu : gpus) total += gpu.energy_j.value_or(0.0);
  return total;
}

std::string JobEnergyRecord::file_name() const {
  return fmt::format("job-{}.step-{}.{}.json", safe(job_id), safe(step), safe(node));
}

nlohmann::ordered_json to_json(const JobEnergyRecord& r) {
  nlohmann::ordered_json j;
  j["schema"] = kSchema;
  j["job_id"] = r.job_id;
  j["step"] = r.step;
  j["array_job_id"] = r.array_job_id;
  j["array_task_id"] = r.array_task_id;
  j["user"] = r.user;
  j["partition"] = r.partition;
  j["node"] = r.node;
  j["start_epoch_s"] = r.start_epoch_s;
  j["end_epoch_s"] = r.end_epoch_s;
  j["energy_j"] = r.energy_j();
  j["gpus"] = nlohmann::ordered_json::array();
  for (const GpuStepEnergy& g : r.gpus) {
    j["gpus"].push_back({{"index", g.index},
                         {"uuid", g.uuid},
                         {"name", g.name},
                         {"energy_j", g.energy_j ? nlohmann::ordered_json(*g.energy_j)
                                                 : nlohmann::ordered_json(nullptr)},
                         {"energy_method", g.energy_method},
                         {"error", g.error}});
  }
  return j;
}

JobEnergyRecord record_from_json(const nlohmann::json& j, const std::string& where) {
  const std::string schema = required<std::string>(j, "schema", where);
  if (schema != kSchema) {
    throw InvalidInput(fmt::format("{}: schema \"{}\", expected \"{}\"", where, schema, kSchema));
  }
  JobEnergyRecord r;
  r.job_id = required<std::string>(j, "job_id", where);
  r.step = required<std::string>(j, "step", where);
  r.array_job_id = required<std::string>(j, "array_job_id", where);
  r.array_task_id = required<std::string>(j, "array_task_id", where);
  r.user = required<std::string>(j, "user", where);
  r.partition = required<std::string>(j, "partition", where);
  r.node = required<std::string>(j, "node", where);
  r.start_epoch_s = required<double>(j, "start_epoch_s", where);
  r.end_epoch_s = required<double>(j, "end_epoch_s", where);
  const nlohmann::json& gpus = required_value(j, "gpus", where);
  if (!gpus.is_array()) throw InvalidInput(fmt::format("{}: \"gpus\" is not a list", where));
  for (const nlohmann::json& g : gpus) {
    GpuStepEnergy gpu;
    gpu.index = required<unsigned int>(g, "index", where);
    gpu.uuid = required<std::string>(g, "uuid", where);
    gpu.name = required<std::string>(g, "name", where);
    if (!g.contains("energy_j")) {
      throw InvalidInput(fmt::format("{}: expected key \"energy_j\" in each GPU", where));
    }
    if (!g.at("energy_j").is_null()) gpu.energy_j = required<double>(g, "energy_j", where);
    gpu.energy_method = required<std::string>(g, "energy_method", where);
    gpu.error = required<std::string>(g, "error", where);
    r.gpus.push_back(std::move(gpu));
  }
  return r;
}

namespace {

// Refuses a record directory others could write into (see write_record).
void check_record_directory(const std::filesystem::path& directory) {
  struct stat info {};
  if (::lstat(directory.c_str(), &info) != 0) {
    throw InvalidInput(fmt::format("record directory {}: cannot create or read it ({})",
                                   directory.string(), std::strerror(errno)));
  }
  if (!S_ISDIR(info.st_mode)) {
    throw InvalidInput(fmt::format(
        "record directory {}: expected a directory, found {}; point dir= at a real directory",
        directory.string(), S_ISLNK(info.st_mode) ? "a symbolic link" : "another kind of file"));
  }
  if (info.st_uid != ::geteuid() || (info.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    throw InvalidInput(fmt::format(
        "record directory {}: owned by uid {} with mode {:04o}; expected the writer's (uid {}) "
        "and writable by nobody else, so that no job can plant files there: chown {} and chmod "
        "go-w it",
        directory.string(), info.st_uid, info.st_mode & 07777, ::geteuid(), ::geteuid()));
  }
}

}  // namespace

std::filesystem::path write_record(const std::filesystem::path& directory,
                                   const JobEnergyRecord& record) {
  std::error_code error;
  std::filesystem::create_directories(directory, error);
  check_record_directory(directory);
  const std::filesystem::path path = directory / record.file_name();
  write_file_atomically(path, to_json(record).dump(2) + "\n", "job energy record");
  return path;
}

JobEnergyRecord read_record(const std::filesystem::path& file) {
  std::ifstream in(file);
  if (!in) throw InvalidInput(fmt::format("{}: cannot read the job energy record", file.string()));
  std::stringstream text;
  text << in.rdbuf();
  nlohmann::json j;
  try {
    j = core::parse_json_document(text.str(), file.string());
  } catch (const nlohmann::json::exception& e) {  // parse_error, or out_of_range: a number > 1e308
    throw InvalidInput(
        fmt::format("{}: not JSON ({}); remove it or restore the record", file.string(), e.what()));
  }
  return record_from_json(j, file.string());
}

std::vector<JobEnergyRecord> read_records(const std::filesystem::path& directory,
                                          const std::string& setting) {
  std::error_code error;
  if (!std::filesystem::is_directory(directory, error)) {
    throw InvalidInput(fmt::format(
        "{} {}: expected the directory of job energy records (the SPANK plugin's dir=), found "
        "{}",
        setting, directory.string(),
        std::filesystem::exists(directory, error) ? "another kind of file" : "nothing there"));
  }
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(directory, error)) {
    if (entry.path().extension() == ".json" && entry.is_regular_file()) {
      files.push_back(entry.path());
    }
  }
  std::sort(files.begin(), files.end());
  std::vector<JobEnergyRecord> records;
  for (const auto& file : files) records.push_back(read_record(file));
  return records;
}

std::map<std::string, double> job_gpu_energy_j(const std::vector<JobEnergyRecord>& records,
                                               const std::string& job_id) {
  std::set<std::string> nodes_with_batch;
  for (const JobEnergyRecord& r : records) {
    if (r.job_id == job_id && r.step == "batch") nodes_with_batch.insert(r.node);
  }
  std::map<std::string, double> energy;
  for (const JobEnergyRecord& r : records) {
    if (r.job_id != job_id) continue;
    if (nodes_with_batch.count(r.node) != 0 && r.step != "batch") continue;
    for (const GpuStepEnergy& g : r.gpus) {
      energy[fmt::format("{}:{}", r.node, g.index)] += g.energy_j.value_or(0.0);
    }
  }
  return energy;
}

double job_energy_j(const std::vector<JobEnergyRecord>& records, const std::string& job_id) {
  double total = 0;
  for (const auto& [gpu, joules] : job_gpu_energy_j(records, job_id)) total += joules;
  return total;
}

std::string admin_comment(const std::vector<JobEnergyRecord>& records, const std::string& job_id) {
  const std::map<std::string, double> gpus = job_gpu_energy_j(records, job_id);
  double total = 0;
  std::string list;
  for (const auto& [gpu, joules] : gpus) {
    total += joules;
    list += fmt::format("{}{}={:.1f}", list.empty() ? "" : ",", gpu, joules);
  }
  return fmt::format("nnergy_gpu_joules={:.1f} gpus={}", total, list);
}

}  // namespace nnergy::fleet
