#include "nnergy/fleet/slurm_job_labeler.h"

#include <charconv>
#include <chrono>
#include <vector>

#include "nnergy/fleet/slurm_job_lookup.h"

namespace nnergy::fleet {

namespace {

// "nvml:3" → 3; nullopt for any other source.
std::optional<unsigned int> nvml_index(const std::string& id) {
  const std::string prefix = "nvml:";
  if (id.rfind(prefix, 0) != 0) return std::nullopt;
  unsigned int index = 0;
  const char* begin = id.data() + prefix.size();
  const char* end = id.data() + id.size();
  const auto [last, error] = std::from_chars(begin, end, index);
  if (error != std::errc() || last != end) return std::nullopt;
  return index;
}

}  // namespace

std::string slurm_jobs_on_gpu(const measure::NvmlLibrary* nvml, unsigned int gpu_index,
                              const std::optional<std::filesystem::path>& mapping_dir,
                              const JobOwner& owner_of) {
  std::vector<std::string> jobs;
  if (mapping_dir) jobs = jobs_in_mapping_dir(*mapping_dir, gpu_index);
  if (nvml != nullptr) {
    try {
      const measure::NvmlGpu gpu = nvml->gpu(gpu_index);
      if (const auto pids = nvml->compute_process_ids(gpu)) {
        for (const unsigned int pid : *pids) {
          if (auto job = slurm_job_of_process(pid, owner_of)) jobs.push_back(std::move(*job));
        }
      }
    } catch (const std::exception&) {
      // A GPU that fails here fails its sampler too, which removes its series; no label then.
    }
  }
  return slurm_job_label(std::move(jobs));
}

SlurmJobLabeler::SlurmJobLabeler(LiveReadings& readings,
                                 std::optional<std::filesystem::path> mapping_dir, double refresh_s,
                                 const std::filesystem::path& scontrol)
    : readings_(readings),
      mapping_dir_(std::move(mapping_dir)),
      refresh_s_(refresh_s),
      owner_of_(scontrol_job_owner(scontrol)) {
  bool any_gpu = false;
  for (const SourceReading& r : readings_.snapshot()) any_gpu |= nvml_index(r.info.id).has_value();
  if (!any_gpu) return;
  nvml_ = measure::NvmlLibrary::load().library;
  refresh();
  thread_ = std::thread([this] {
    std::unique_lock<std::mutex> lock(mutex_);
    while (!wake_.wait_for(lock, std::chrono::duration<double>(refresh_s_),
                           [this] { return stopping_; })) {
      lock.unlock();
      refresh();
      lock.lock();
    }
  });
}

SlurmJobLabeler::~SlurmJobLabeler() {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void SlurmJobLabeler::refresh() {
  const std::vector<SourceReading> readings = readings_.snapshot();
  for (std::size_t i = 0; i < readings.size(); ++i) {
    if (const auto index = nvml_index(readings[i].info.id)) {
      readings_.set_slurm_job(i, slurm_jobs_on_gpu(nvml_.get(), *index, mapping_dir_, owner_of_));
    }
  }
}

}  // namespace nnergy::fleet
