#include "nnergy/measure/child_process.h"

#include <fmt/format.h>
#include <spawn.h>
#include <sys/wait.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>

#include "nnergy/core/error.h"

extern char** environ;

namespace nnergy::measure {

namespace {

// The running command's pid for the forwarding handler; 0 when none runs.
std::atomic<pid_t> g_child_pid{0};
static_assert(std::atomic<pid_t>::is_always_lock_free,
              "the forwarding handler may only read lock-free atomics");

void forward_to_child(int signal_number) {
  const pid_t pid = g_child_pid.load();
  if (pid > 0) kill(pid, signal_number);
}

}  // namespace

ChildProcess::ChildProcess(const std::vector<std::string>& argv)
    : ignore_(SignalScope::ignoring({SIGINT, SIGQUIT})),
      forward_({SIGTERM, SIGHUP}, forward_to_child) {
  if (argv.empty()) throw InvalidInput("expected a command to run, found none");
  if (g_child_pid.load() != 0) {
    throw InternalError("a second ChildProcess while one still forwards signals");
  }
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  // The command gets default dispositions even though this process ignores SIGINT and SIGQUIT.
  sigset_t defaults;
  sigemptyset(&defaults);
  for (int s : {SIGINT, SIGQUIT, SIGTERM, SIGHUP}) sigaddset(&defaults, s);
  posix_spawnattr_setsigdefault(&attributes, &defaults);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGDEF);
  // The command inherits standard input, output and error only: not the trace or power file
  // monitor is writing (a command could otherwise write into it), nor any other descriptor.
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addclosefrom_np(&actions, 3);
  const int rc = posix_spawnp(&pid_, args[0], &actions, &attributes, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  if (rc != 0) throw InvalidInput(fmt::format("cannot run '{}': {}", argv[0], std::strerror(rc)));
  g_child_pid.store(pid_);
}

ChildProcess::~ChildProcess() {
  if (!waited_) {
    kill(pid_, SIGTERM);
    int status = 0;
    while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
  }
  g_child_pid.store(0);
}

int ChildProcess::wait() {
  if (waited_) return status_;
  int status = 0;
  while (waitpid(pid_, &status, 0) < 0) {
    if (errno != EINTR) {
      throw RuntimeFailure(fmt::format("waitpid (pid {}): {}", pid_, std::strerror(errno)));
    }
  }
  waited_ = true;
  g_child_pid.store(0);
  status_ = 1;
  if (WIFEXITED(status)) status_ = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) status_ = 128 + WTERMSIG(status);
  return status_;
}

}  // namespace nnergy::measure
