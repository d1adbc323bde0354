#include "nnergy/fleet/sbatch_campaign.h"

#include <fmt/format.h>

#include <algorithm>

#include "nnergy/core/atomic_file.h"
#include "nnergy/core/error.h"
#include "nnergy/core/text.h"

namespace nnergy::fleet {

namespace {

constexpr int kMaxTasks = 10000;
// Times a task whose measurement was killed by a signal requeues itself (SLURM_RESTART_COUNT).
constexpr int kMaxRequeues = 3;

std::string quoted_path(const std::filesystem::path& path) { return shell_quote(path.string()); }

std::string sbatch_header(const SbatchCampaign& c, const std::string& job_name,
                          const std::string& log_pattern) {
  std::string text = "#!/bin/bash\n";
  text += fmt::format("#SBATCH --job-name={}\n", job_name);
  text += fmt::format("#SBATCH --output={}\n", (c.directory / "logs" / log_pattern).string());
  text += "#SBATCH --open-mode=append\n";
  for (const std::string& option : c.sbatch_options) text += "#SBATCH " + option + "\n";
  return text;
}

void check(const SbatchCampaign& c) {
  if (c.tasks < 1 || c.tasks > kMaxTasks) {
    throw InvalidInput(fmt::format("{} {}: expected 1 to {} array tasks (one shard each)",
                                   c.tasks_setting, c.tasks, kMaxTasks));
  }
  // #SBATCH lines end at a newline: a directory with one would inject a line into the script.
  const std::string directory = c.directory.string();
  if (directory.find_first_of("\n\r") != std::string::npos) {
    throw InvalidInput(fmt::format(
        "{} '{}': the directory's name holds a line break, which would end the #SBATCH line "
        "that names it; choose a directory without one",
        c.directory_setting, escape_control_characters(directory)));
  }
  for (const std::string& option : c.sbatch_options) {
    const bool one_line = option.find_first_of("\n\r") == std::string::npos;
    if (option.rfind("--", 0) != 0 || option.size() < 3 || !one_line) {
      throw InvalidInput(fmt::format(
          "{} '{}': expected one sbatch option as --NAME or --NAME=VALUE on one line, e.g. "
          "--partition=gpu",
          c.options_setting, option));
    }
  }
}

}  // namespace

std::string shell_quote(std::string_view text) {
  const bool safe = !text.empty() && std::all_of(text.begin(), text.end(), [](char ch) {
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
           std::string_view("_-./:=,+@%").find(ch) != std::string_view::npos;
  });
  if (safe) return std::string(text);
  std::string quoted = "'";
  for (const char ch : text) quoted += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return quoted + "'";
}

SbatchFiles write_sbatch_campaign(const SbatchCampaign& c) {
  check(c);
  std::error_code error;
  for (const char* sub : {"shards", "logs"}) {
    std::filesystem::create_directories(c.directory / sub, error);
    if (error) {
      throw InvalidInput(fmt::format("{} {}: cannot create {} ({})", c.directory_setting,
                                     c.directory.string(), (c.directory / sub).string(),
                                     error.message()));
    }
  }
  SbatchFiles files;
  files.array_script = c.directory / "profile-array.sbatch";
  files.merge_script = c.directory / "merge.sbatch";
  files.submit_script = c.directory / "submit.sh";
  for (int k = 0; k < c.tasks; ++k) {
    files.shard_dbs.push_back(c.directory / "shards" / fmt::format("shard-{}.sqlite", k));
  }

  std::string array = sbatch_header(c, c.job_name, "profile-%A_%a.out");
  array += fmt::format("#SBATCH --array=0-{}\n", c.tasks - 1);
  // A task that fails or is preempted can be requeued (scontrol requeue): it resumes its shard.
  array += "#SBATCH --requeue\n";
  if (c.gpu) array += "#SBATCH --gres=gpu:1\n";
  array += "#SBATCH --ntasks=1\n\n";
  array +=
      "# One shard of the campaign per array task (nnergy profile --shard auto reads\n"
      "# SLURM_ARRAY_TASK_ID/COUNT); a requeued task skips what its shard already holds.\n";
  std::string command = quoted_path(c.nnergy) + " profile";
  for (const std::string& argument : c.profile_arguments) command += " " + shell_quote(argument);
  if (c.gpu) command += " --gpu auto";
  command += " --shard auto --db " + quoted_path(c.directory / "shards") +
             "/shard-\"${SLURM_ARRAY_TASK_ID}\".sqlite";
  // A measurement killed by a signal (SIGKILL, the OOM killer, a node reboot) requeues its own
  // task, which resumes the shard; after kMaxRequeues the task fails and the merge never runs.
  array += command + "\n";
  array += "status=$?\n";
  array += fmt::format(
      "if [ \"$status\" -gt 128 ] && [ \"${{SLURM_RESTART_COUNT:-0}}\" -lt {} ]; then\n"
      "  echo \"nnergy profile killed by signal $((status - 128)); requeueing "
      "${{SLURM_ARRAY_JOB_ID}}_${{SLURM_ARRAY_TASK_ID}}\" >&2\n"
      "  scontrol requeue \"${{SLURM_ARRAY_JOB_ID}}_${{SLURM_ARRAY_TASK_ID}}\"\n"
      "fi\n"
      "exit \"$status\"\n",
      kMaxRequeues);

  std::string merge = sbatch_header(c, c.job_name + "-merge", "merge-%j.out");
  merge += "#SBATCH --ntasks=1\n\n";
  merge += "# Runs once every array task has succeeded (submit.sh: --dependency=afterok).\n";
  merge += "exec " + quoted_path(c.nnergy) + " dataset merge " + quoted_path(c.db);
  for (const auto& shard : files.shard_dbs) merge += " " + quoted_path(shard);
  merge += "\n";

  std::string submit =
      "#!/bin/sh\n"
      "# Submits the campaign: the profile array, then the merge once every task succeeded.\n"
      "set -eu\n";
  submit += fmt::format("array=$(sbatch --parsable {})\n", quoted_path(files.array_script));
  submit += "array=${array%%;*}\n";
  submit += fmt::format("merge=$(sbatch --parsable --dependency=afterok:\"$array\" {})\n",
                        quoted_path(files.merge_script));
  submit += "merge=${merge%%;*}\n";
  submit += "echo \"profile array job $array, merge job $merge\"\n";

  write_files_atomically({{files.array_script, array, c.directory_setting},
                          {files.merge_script, merge, c.directory_setting},
                          {files.submit_script, submit, c.directory_setting}});
  std::filesystem::permissions(files.submit_script,
                               std::filesystem::perms::owner_exec |
                                   std::filesystem::perms::group_exec |
                                   std::filesystem::perms::others_exec,
                               std::filesystem::perm_options::add, error);
  return files;
}

}  // namespace nnergy::fleet
