#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace nnergy::fleet {

/// The Slurm job a process belongs to: SLURM_JOB_ID in its environment (/proc/PID/environ,
/// readable by root and by the process's owner), else the job_N component of its cgroup path
/// (/proc/PID/cgroup, as Slurm's proctrack/cgroup and task/cgroup place tasks); nullopt when
/// neither names one or the process is gone. `proc_root` is /proc outside tests. Thread-safe.
std::optional<std::string> slurm_job_of_process(unsigned int pid,
                                                const std::filesystem::path& proc_root = "/proc");

/// The jobs recorded for GPU `gpu_index` in a job-mapping directory, the layout of
/// dcgm-exporter's --hpc-job-mapping-dir (written by a site's Slurm prolog/epilog): a file named
/// after the GPU's NVML index holding one job id per line. Empty when the file is absent.
/// Thread-safe.
std::vector<std::string> jobs_in_mapping_dir(const std::filesystem::path& directory,
                                             unsigned int gpu_index);

/// The value of the `slurm_job` label: the distinct ids in ascending numeric order, joined by
/// ","; "" for none (Prometheus then drops the label).
std::string slurm_job_label(std::vector<std::string> jobs);

}  // namespace nnergy::fleet
