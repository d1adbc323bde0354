#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "nnergy/core/signals.h"

namespace nnergy::measure {

/// A command run the way a shell runs a foreground command, for tools that measure it (`nnergy
/// monitor`): with this process's stdin, stdout, stderr and environment, and for as long as the
/// ChildProcess lives
/// - SIGINT and SIGQUIT are ignored here: the terminal sends them to the whole foreground process
///   group, so the command gets them itself and this process lives on to report;
/// - SIGTERM and SIGHUP sent to this process are forwarded to the command, so that it, not this
///   process, decides how to end.
/// The command starts with the default disposition of all four, even though this process ignores
/// some of them. At most one ChildProcess forwards signals at a time per process (the forwarding
/// handler is process-wide); a second one at the same time throws InternalError. Not thread-safe.
class ChildProcess {
 public:
  /// Starts `argv` (argv[0] searched on PATH). Throws InvalidInput for an empty `argv` or a
  /// command that cannot be started ("cannot run 'x': No such file or directory").
  explicit ChildProcess(const std::vector<std::string>& argv);
  /// A command not waited for is sent SIGTERM and reaped, so that none is left behind when an
  /// exception unwinds past it; then the previous signal dispositions are restored.
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  /// Waits until the command ends and returns its exit status as a shell gives it: the exit
  /// code, or 128 + the number of the signal that ended it. Again after that: the same status.
  /// Throws RuntimeFailure when waitpid fails.
  int wait();

  pid_t pid() const { return pid_; }

 private:
  // Members are destroyed in reverse order: the command is reaped before the dispositions go.
  SignalScope ignore_;
  SignalScope forward_;
  pid_t pid_ = 0;
  bool waited_ = false;
  int status_ = 0;
};

}  // namespace nnergy::measure
