#include "nnergy/fleet/program_run.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <thread>

extern char** environ;

namespace nnergy::fleet {

namespace {

using Clock = std::chrono::steady_clock;

int remaining_ms(Clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  return left.count() < 0 ? 0 : static_cast<int>(left.count());
}

}  // namespace

ProgramRun run_program(const std::vector<std::string>& argv, double timeout_s,
                       std::size_t max_out_bytes) {
  ProgramRun run;
  if (argv.empty()) return run;
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) return run;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], 1);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  std::vector<std::string> words = argv;
  std::vector<char*> args;
  for (std::string& w : words) args.push_back(w.data());
  args.push_back(nullptr);
  pid_t pid = 0;
  const int spawned = posix_spawn(&pid, words[0].c_str(), &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(pipe_fds[1]);
  if (spawned != 0) {
    ::close(pipe_fds[0]);
    return run;
  }
  run.started = true;
  const Clock::time_point deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                                        std::chrono::duration<double>(timeout_s));
  std::array<char, 4096> buffer{};
  for (;;) {
    pollfd p{pipe_fds[0], POLLIN, 0};
    const int ready = ::poll(&p, 1, remaining_ms(deadline));
    if (ready == 0) {
      run.timed_out = true;
      break;
    }
    if (ready < 0) continue;  // EINTR
    const ssize_t n = ::read(pipe_fds[0], buffer.data(), buffer.size());
    if (n <= 0) break;  // end of output (or an error)
    const std::size_t room = max_out_bytes - std::min(max_out_bytes, run.out.size());
    run.out.append(buffer.data(), std::min(room, static_cast<std::size_t>(n)));
  }
  ::close(pipe_fds[0]);
  if (run.timed_out) ::kill(pid, SIGKILL);
  int status = 0;
  for (;;) {
    const pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    if (done < 0 && errno != EINTR) return run;
    if (!run.timed_out && remaining_ms(deadline) == 0) {
      run.timed_out = true;
      ::kill(pid, SIGKILL);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  if (!run.timed_out && WIFEXITED(status)) run.exit_status = WEXITSTATUS(status);
  return run;
}

}  // namespace nnergy::fleet
