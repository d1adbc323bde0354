#include "nnergy/core/signals.h"

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <mutex>
#include <string>

#include "nnergy/core/error.h"

namespace nnergy {

namespace {

// The table the dispatch reads in signal context: fixed size, lock-free atomics only. A slot's
// `previous` is written before its state becomes kActive (release) and read after the state was
// seen kActive (acquire).
enum SlotState : int { kFree = 0, kClaimed = 1, kActive = 2, kChained = 3 };

struct Slot {
  std::atomic<int> state{kFree};
  std::atomic<int> signal_number{0};
  std::atomic<SignalScope::Handler> handler{nullptr};
  std::atomic<bool> chain{false};
  std::atomic<std::uint64_t> sequence{0};  ///< creation order: the largest active one is innermost
  struct sigaction previous {};
};
static_assert(std::atomic<int>::is_always_lock_free &&
                  std::atomic<SignalScope::Handler>::is_always_lock_free &&
                  std::atomic<bool>::is_always_lock_free &&
                  std::atomic<std::uint64_t>::is_always_lock_free,
              "the signal dispatch may only read lock-free atomics");

Slot g_slots[SignalScope::kMaxHandledSignals];

// Guards claiming and releasing slots and g_sequence. Never taken in signal context.
std::mutex g_mutex;
std::uint64_t g_sequence = 0;

void dispatch(int signal_number) {
  const int saved_errno = errno;
  Slot* innermost = nullptr;
  std::uint64_t innermost_sequence = 0;
  for (Slot& slot : g_slots) {
    if (slot.state.load(std::memory_order_acquire) != kActive) continue;
    if (slot.signal_number.load(std::memory_order_relaxed) != signal_number) continue;
    const std::uint64_t sequence = slot.sequence.load(std::memory_order_relaxed);
    if (innermost == nullptr || sequence > innermost_sequence) {
      innermost = &slot;
      innermost_sequence = sequence;
    }
  }
  if (innermost == nullptr) {
    // The scope ended between the kernel picking this handler and now; its previous disposition
    // is being put back.
    errno = saved_errno;
    return;
  }
  const SignalScope::Handler handler = innermost->handler.load(std::memory_order_relaxed);
  if (handler != nullptr) handler(signal_number);
  if (innermost->chain.load(std::memory_order_relaxed)) {
    int expected = kActive;
    if (innermost->state.compare_exchange_strong(expected, kChained)) {
      sigaction(signal_number, &innermost->previous, nullptr);
    }
    errno = saved_errno;
    // The signal is blocked while its handler runs, so it is delivered to the disposition just
    // put back as soon as this returns.
    raise(signal_number);
    return;
  }
  errno = saved_errno;
}

void check_signal(int signal_number) {
  if (signal_number <= 0 || signal_number >= NSIG || signal_number == SIGKILL ||
      signal_number == SIGSTOP) {
    throw InvalidInput("signal " + std::to_string(signal_number) +
                       ": expected a signal that can be caught (not SIGKILL or SIGSTOP)");
  }
}

bool is_ignored(const struct sigaction& action) {
  return (action.sa_flags & SA_SIGINFO) == 0 && action.sa_handler == SIG_IGN;
}

// Puts slot `index`'s previous disposition back (unless a chained dispatch already did) and frees
// it. Called with g_mutex held.
void release_slot(std::size_t index) {
  Slot& slot = g_slots[index];
  // The disposition first: a signal arriving in between goes to the previous disposition instead
  // of to a dispatch that no longer finds the slot.
  if (slot.state.load(std::memory_order_acquire) == kActive) {
    sigaction(slot.signal_number.load(), &slot.previous, nullptr);
  }
  slot.state.store(kFree, std::memory_order_release);
}

}  // namespace

SignalScope::SignalScope(const std::vector<int>& signals, Handler handler, Options options) {
  if (handler == nullptr) throw InvalidInput("signal scope: expected a handler, found none");
  for (int s : signals) check_signal(s);
  struct sigaction action {};
  action.sa_handler = dispatch;
  sigemptyset(&action.sa_mask);
  for (int s : signals) sigaddset(&action.sa_mask, s);
  action.sa_flags = SA_RESTART;

  const std::lock_guard<std::mutex> lock(g_mutex);
  for (int s : signals) {
    struct sigaction current {};
    if (sigaction(s, nullptr, &current) != 0) continue;
    if (options.keep_ignored && is_ignored(current)) continue;
    std::size_t index = kMaxHandledSignals;
    for (std::size_t i = 0; i < kMaxHandledSignals; ++i) {
      int expected = kFree;
      if (g_slots[i].state.compare_exchange_strong(expected, kClaimed)) {
        index = i;
        break;
      }
    }
    if (index == kMaxHandledSignals) {
      while (!slots_.empty()) {
        release_slot(slots_.back());
        slots_.pop_back();
      }
      throw InternalError("more than " + std::to_string(kMaxHandledSignals) +
                          " signal handlers active at once in one process");
    }
    Slot& slot = g_slots[index];
    slot.signal_number.store(s, std::memory_order_relaxed);
    slot.handler.store(handler, std::memory_order_relaxed);
    slot.chain.store(options.then == Then::kChain, std::memory_order_relaxed);
    slot.sequence.store(++g_sequence, std::memory_order_relaxed);
    slot.previous = current;
    slot.state.store(kActive, std::memory_order_release);
    sigaction(s, &action, nullptr);
    slots_.push_back(index);
  }
}

SignalScope::SignalScope(const std::vector<int>& signals, IgnoreTag) {
  for (int s : signals) check_signal(s);
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  sigemptyset(&ignore.sa_mask);
  for (int s : signals) {
    Ignored entry{s, {}};
    if (sigaction(s, &ignore, &entry.previous) == 0) ignored_.push_back(entry);
  }
}

SignalScope SignalScope::ignoring(const std::vector<int>& signals) {
  return SignalScope(signals, IgnoreTag{});
}

SignalScope::~SignalScope() {
  for (auto it = ignored_.rbegin(); it != ignored_.rend(); ++it) {
    sigaction(it->signal_number, &it->previous, nullptr);
  }
  if (slots_.empty()) return;
  const std::lock_guard<std::mutex> lock(g_mutex);
  for (auto it = slots_.rbegin(); it != slots_.rend(); ++it) release_slot(*it);
}

}  // namespace nnergy
