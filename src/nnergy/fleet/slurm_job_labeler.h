#pragma once

#include <condition_variable>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "nnergy/fleet/live_readings.h"
#include "nnergy/fleet/slurm_job_lookup.h"
#include "nnergy/measure/nvml_library.h"

namespace nnergy::fleet {

/// The slurm_job label of NVML GPU `gpu_index` now: the jobs of its compute processes
/// (NvmlLibrary::compute_process_ids, slurm_job_of_process) and those the job-mapping directory
/// lists for it, as slurm_job_label; "" when none is known. `nvml` may be null (no process
/// lookup); an NVML error reads as no process; `owner_of` checks a job named only by a
/// process's environment (slurm_job_of_process). Thread-safe.
std::string slurm_jobs_on_gpu(const measure::NvmlLibrary* nvml, unsigned int gpu_index,
                              const std::optional<std::filesystem::path>& mapping_dir,
                              const JobOwner& owner_of);

/// Keeps the slurm_job label of every NVML GPU source ("nvml:N") of a LiveReadings current, on
/// its own thread, every `refresh_s` seconds (Slurm jobs start and end on the scale of seconds
/// or more; a scrape never waits for /proc). Sources of other kinds are left unlabelled.
class SlurmJobLabeler {
 public:
  /// Labels once, then starts the thread. `readings` must outlive the labeler.
  /// `scontrol` is asked who owns a job named only by a process's environment.
  SlurmJobLabeler(LiveReadings& readings, std::optional<std::filesystem::path> mapping_dir,
                  double refresh_s, const std::filesystem::path& scontrol);
  ~SlurmJobLabeler();  ///< stops the thread
  SlurmJobLabeler(const SlurmJobLabeler&) = delete;
  SlurmJobLabeler& operator=(const SlurmJobLabeler&) = delete;

 private:
  void refresh();

  LiveReadings& readings_;
  std::optional<std::filesystem::path> mapping_dir_;
  double refresh_s_;
  JobOwner owner_of_;
  std::shared_ptr<measure::NvmlLibrary> nvml_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace nnergy::fleet
