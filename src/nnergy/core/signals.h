#pragma once

#include <csignal>
#include <cstddef>
#include <vector>

namespace nnergy {

/// Installs a disposition for a set of signals for its lifetime and puts the previous ones back
/// when it ends: the one owner of signal handling in nnergy (ClockLock resets the clocks and
/// passes the signal on, ChildProcess ignores the terminal's signals and forwards the others to
/// its command, a campaign sets a stop flag).
///
/// Async-signal safety: a handler runs in signal context, on whichever thread the kernel picks,
/// possibly interrupting that thread anywhere (inside malloc, holding a mutex). It may therefore
/// only read and write lock-free std::atomic objects (or volatile std::sig_atomic_t) and call
/// async-signal-safe functions (kill, raise, write, sigaction, _exit; see signal-safety(7)): no
/// allocation, no locks, no stdio, no exceptions. The dispatch that calls it keeps to the same
/// rules: it reads a fixed process-wide table of atomics, saves and restores errno, and with
/// Then::kChain calls sigaction and raise. While a handler runs, the scope's other signals are
/// blocked on that thread; handlers are installed with SA_RESTART.
///
/// Scopes may nest, also over the same signal: the innermost (most recently created) scope that
/// still handles a signal receives it. Scopes over the same signal must end in the reverse order
/// of their creation, as RAII in one thread ensures. Creating and ending scopes is thread-safe.
/// At most kMaxHandledSignals (scope, signal) pairs with a handler are active in a process.
class SignalScope {
 public:
  /// Called in signal context with the signal's number; see the class comment for what it may do.
  using Handler = void (*)(int signal_number);

  static constexpr std::size_t kMaxHandledSignals = 32;

  /// What happens once the handler returns.
  enum class Then {
    /// The signal is handled; the program goes on (a stop flag, forwarding to a child).
    kContinue,
    /// The disposition in place before this scope is put back and the signal raised again, so
    /// that it reaches that disposition (an outer scope, a handler installed by others, or the
    /// default action, which usually ends the process) as it would have without this scope. The
    /// scope no longer handles that signal afterwards.
    kChain,
  };

  struct Options {
    Then then = Then::kContinue;
    /// Leave a signal whose disposition is SIG_IGN ignored (e.g. SIGINT of a background job)
    /// instead of handling it.
    bool keep_ignored = false;
  };

  /// Calls `handler` for each of `signals` while the scope lives. Throws InvalidInput for a null
  /// handler or a signal that cannot be caught (SIGKILL, SIGSTOP, a number out of range),
  /// InternalError when more than kMaxHandledSignals would be active. Installs nothing on failure.
  SignalScope(const std::vector<int>& signals, Handler handler, Options options);
  SignalScope(const std::vector<int>& signals, Handler handler)
      : SignalScope(signals, handler, Options{}) {}

  /// Ignores `signals` (SIG_IGN) while the scope lives. Throws as the constructor.
  static SignalScope ignoring(const std::vector<int>& signals);

  /// Restores the dispositions that were in place when the scope was created (except for a
  /// signal a Then::kChain scope has already passed on, which already has it).
  ~SignalScope();
  SignalScope(const SignalScope&) = delete;
  SignalScope& operator=(const SignalScope&) = delete;

 private:
  struct IgnoreTag {};
  SignalScope(const std::vector<int>& signals, IgnoreTag);

  /// Ignored signals: the dispositions to put back.
  struct Ignored {
    int signal_number;
    struct sigaction previous;
  };
  std::vector<Ignored> ignored_;
  /// Handled signals: indices in the process-wide table the dispatch reads.
  std::vector<std::size_t> slots_;
};

}  // namespace nnergy
