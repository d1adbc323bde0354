#pragma once

// Runs a program without a shell and captures what it prints: for the root SPANK plugin and the
// exporter, which ask Slurm's own tools (scontrol) what a job was given instead of trusting the
// job's environment.

#include <cstddef>
#include <string>
#include <vector>

namespace nnergy::fleet {

struct ProgramRun {
  bool started = false;    ///< false: the program could not be run (missing, not executable)
  bool timed_out = false;  ///< killed (SIGKILL) after the timeout
  int exit_status = -1;    ///< its exit status; -1 when it did not exit normally
  std::string out;         ///< its standard output, at most `max_out_bytes`
  bool ok() const { return started && !timed_out && exit_status == 0; }
};

/// Runs `argv[0]` (an absolute path) with arguments `argv` and the calling process's
/// environment, no shell: standard input and error on /dev/null, standard output captured (at
/// most `max_out_bytes`; the rest is read and dropped). Waits at most `timeout_s` seconds, then
/// kills it. The child inherits no other descriptor of the caller's that is close-on-exec.
ProgramRun run_program(const std::vector<std::string>& argv, double timeout_s,
                       std::size_t max_out_bytes = 1 << 20);

}  // namespace nnergy::fleet
