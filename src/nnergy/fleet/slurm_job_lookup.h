#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace nnergy::fleet {

/// The uid that owns Slurm job `job`; nullopt when unknown.
using JobOwner = std::function<std::optional<unsigned int>(const std::string& job)>;

/// The Slurm job a process belongs to, from what its user cannot forge first: the job_N
/// component of its cgroup path (/proc/PID/cgroup, as Slurm's task/cgroup and proctrack/cgroup
/// place tasks); a process in a Slurm cgroup without one (slurmd, slurmstepd) belongs to none.
/// Only for a process in no Slurm cgroup (task/none with proctrack/linuxproc) its environment's
/// SLURM_JOB_ID (/proc/PID/environ, readable by root and the process's owner), and only when
/// `owner_of` says the job is owned by the process's real uid: anyone can run a command with
/// any SLURM_JOB_ID. A null `owner_of` never trusts the environment. nullopt when nothing names
/// a job or the process is gone. `proc_root` is /proc outside tests. Thread-safe.
std::optional<std::string> slurm_job_of_process(unsigned int pid, const JobOwner& owner_of,
                                                const std::filesystem::path& proc_root = "/proc");

/// A JobOwner asking Slurm (`SCONTROL show job -o JOB`: "UserId=NAME(UID)"), each job once
/// (owners do not change; unknown jobs are asked again), 5 s at most per call. Thread-safe.
JobOwner scontrol_job_owner(std::filesystem::path scontrol);

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
