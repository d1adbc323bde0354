#include "nnergy/measure/clock_control.h"

#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

#include "nnergy/core/atomic_file.h"
#include "nnergy/core/error.h"
#include "nnergy/core/signals.h"
#include "nnergy/core/text.h"

namespace nnergy::measure {

std::vector<std::int64_t> parse_clock_list(const std::string& text, std::string_view setting) {
  std::vector<std::int64_t> clocks;
  if (text.empty()) return clocks;
  for (const std::string& item : split_trimmed(text, ',')) {
    if (item == "default") {
      clocks.push_back(0);
      continue;
    }
    if (item.empty() || item.size() > 6 ||
        !std::all_of(item.begin(), item.end(), [](char ch) { return ch >= '0' && ch <= '9'; })) {
      throw InvalidInput(
          fmt::format("{} {}: '{}' is not a clock; expected MHz as whole numbers, or 'default'",
                      setting, text, item));
    }
    clocks.push_back(std::stoll(item));
  }
  return clocks;
}

namespace {

// The table of active locks that the signal handler reads.
//
// Async-signal safety (core/signals.h): the handler reads this fixed-size table of lock-free
// atomics (no allocation, no mutex). nvmlDeviceResetGpuLockedClocks is not documented as
// async-signal-safe: should the signal interrupt a thread inside NVML holding NVML's internal
// lock, the reset could block. That risk is accepted because the alternative is worse: a GPU left
// locked at a low clock until someone resets it as root. A dedicated thread waiting in sigwait
// would avoid it, but needs the signals blocked in every thread of the host program, which a
// library cannot impose.
enum SlotState : int { kFree = 0, kActive = 1 };

struct Slot {
  std::atomic<int> state{kFree};
  std::atomic<nvml::ResetLockedClocksFunction> reset{nullptr};
  std::atomic<nvml::Device> device{nullptr};
  // The lock file to unlink (async-signal-safe) after the reset; written before `state` turns
  // active and read only after it reads active.
  char lock_path[512] = {};
};
static_assert(std::atomic<int>::is_always_lock_free &&
                  std::atomic<nvml::ResetLockedClocksFunction>::is_always_lock_free &&
                  std::atomic<nvml::Device>::is_always_lock_free,
              "the signal handler may only read lock-free atomics");

Slot g_slots[ClockLock::kMaxActiveLocks];

// Guards claiming and releasing slots, g_active_locks and g_signal_scope. Never taken by the
// signal handler.
std::mutex g_mutex;
std::size_t g_active_locks = 0;
// SIGINT and SIGTERM reset every active lock, then reach the previous disposition; present while
// any lock is held.
std::optional<SignalScope> g_signal_scope;

void reset_locked_clocks_on_signal(int) {
  for (Slot& slot : g_slots) {
    if (slot.state.load(std::memory_order_acquire) != kActive) continue;
    const nvml::ResetLockedClocksFunction reset = slot.reset.load(std::memory_order_acquire);
    const nvml::Device device = slot.device.load(std::memory_order_acquire);
    // A slot being released and reused concurrently may yield another active lock's device:
    // resetting it too is harmless, since every active lock is being reset.
    if (reset != nullptr && device != nullptr) reset(device);
    if (slot.lock_path[0] != '\0') ::unlink(slot.lock_path);
  }
}

std::filesystem::path lock_file(unsigned int gpu);

// Called with g_mutex held when the first lock is taken.
void install_handlers() {
  // An ignored signal must stay ignored (e.g. SIGINT of a background job).
  g_signal_scope.emplace(std::vector<int>{SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2,
                                          SIGPIPE, SIGALRM, SIGXCPU, SIGABRT},
                         reset_locked_clocks_on_signal,
                         SignalScope::Options{SignalScope::Then::kChain, true});
}

// Called with g_mutex held when the last lock goes.
void uninstall_handlers() { g_signal_scope.reset(); }

std::size_t claim_slot(nvml::ResetLockedClocksFunction reset, const NvmlGpu& gpu,
                       const std::string& lock_path) {
  const std::lock_guard<std::mutex> lock(g_mutex);
  std::size_t free_slot = ClockLock::kMaxActiveLocks;
  for (std::size_t i = 0; i < ClockLock::kMaxActiveLocks; ++i) {
    Slot& slot = g_slots[i];
    if (slot.state.load() == kActive) {
      if (slot.device.load() == gpu.handle) {
        // The inner lock's reset would silently undo the outer one.
        throw InvalidInput(
            fmt::format("the clocks of GPU {} are already locked by this process", gpu.index));
      }
    } else if (free_slot == ClockLock::kMaxActiveLocks) {
      free_slot = i;
    }
  }
  if (free_slot == ClockLock::kMaxActiveLocks) {
    throw InvalidInput(
        fmt::format("more than {} clock locks at once in one process", ClockLock::kMaxActiveLocks));
  }
  // The handlers first: installing them may throw, and nothing is claimed yet then.
  if (g_active_locks == 0) install_handlers();
  ++g_active_locks;
  Slot& slot = g_slots[free_slot];
  const std::size_t n = std::min(lock_path.size(), sizeof slot.lock_path - 1);
  std::copy_n(lock_path.data(), n, slot.lock_path);
  slot.lock_path[n] = '\0';
  slot.reset.store(reset, std::memory_order_release);
  slot.device.store(gpu.handle, std::memory_order_release);
  slot.state.store(kActive, std::memory_order_release);
  return free_slot;
}

void release_slot(std::size_t index) {
  const std::lock_guard<std::mutex> lock(g_mutex);
  g_slots[index].state.store(kFree, std::memory_order_release);
  g_slots[index].device.store(nullptr, std::memory_order_release);
  if (--g_active_locks == 0) uninstall_handlers();
}

std::shared_ptr<NvmlLibrary> load_for_clock_control(unsigned int gpu) {
  NvmlLoadResult loaded = NvmlLibrary::load();
  if (!loaded.library) {
    throw DeviceError(fmt::format("cannot control the clocks of GPU {}: NVML is not available: {}",
                                  gpu, loaded.unavailable_reason));
  }
  return std::move(loaded.library);
}

unsigned int whole_mhz(double mhz) { return static_cast<unsigned int>(std::lround(mhz)); }

std::filesystem::path lock_file(unsigned int gpu) {
  return clock_lock_directory() / fmt::format("gpu-{}.lock", gpu);
}

// Records that this process holds GPU `gpu` at [min, max] MHz. Best effort: a directory that
// cannot be written (not root) leaves only the signal handlers.
void write_lock_file(unsigned int gpu, unsigned int min_mhz, unsigned int max_mhz) {
  std::error_code ignored;
  std::filesystem::create_directories(clock_lock_directory(), ignored);
  try {
    write_file_atomically(lock_file(gpu), fmt::format("{} {} {}\n", ::getpid(), min_mhz, max_mhz),
                          "clock lock");
  } catch (const InvalidInput&) {
  }
}

void remove_lock_file(unsigned int gpu) {
  std::error_code ignored;
  std::filesystem::remove(lock_file(gpu), ignored);
}

}  // namespace

std::filesystem::path clock_lock_directory() {
  const char* dir = std::getenv("NNERGY_CLOCK_LOCK_DIR");
  return dir != nullptr && *dir != '\0' ? std::filesystem::path(dir) : "/run/nnergy";
}

std::vector<std::string> reset_clocks_left_locked(NvmlLibrary& library) {
  std::vector<std::string> said;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(clock_lock_directory(), error)) {
    unsigned int gpu = 0;
    const std::string name = entry.path().filename().string();
    if (std::sscanf(name.c_str(), "gpu-%u.lock", &gpu) != 1 ||
        name != fmt::format("gpu-{}.lock", gpu)) {
      continue;
    }
    std::ifstream in(entry.path());
    long pid = 0;
    unsigned int min_mhz = 0, max_mhz = 0;
    if (!(in >> pid >> min_mhz >> max_mhz) || pid <= 0) continue;
    // A process that still runs (or that this user may not signal, EPERM) holds its lock.
    if (::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH) continue;
    try {
      library.reset_locked_clocks(library.gpu(gpu));
      said.push_back(fmt::format(
          "the clocks of GPU {} were left locked at {}-{} MHz by process {}, which ended without "
          "resetting them: reset now",
          gpu, min_mhz, max_mhz, pid));
    } catch (const std::exception& e) {
      said.push_back(fmt::format(
          "the clocks of GPU {} were left locked at {}-{} MHz by process {}, which ended without "
          "resetting them; resetting them failed ({}): reset them as root with `nvidia-smi "
          "--reset-gpu-clocks -i {}`",
          gpu, min_mhz, max_mhz, pid, e.what(), gpu));
    }
    std::filesystem::remove(entry.path(), error);
  }
  return said;
}

std::vector<double> supported_core_clocks_mhz(unsigned int gpu) {
  return supported_core_clocks_mhz(*load_for_clock_control(gpu), gpu);
}

std::vector<double> supported_core_clocks_mhz(const NvmlLibrary& library, unsigned int gpu) {
  const NvmlGpu handle = library.gpu(gpu);
  std::vector<double> clocks;
  for (unsigned int memory_mhz : library.supported_memory_clocks_mhz(handle)) {
    for (unsigned int core_mhz : library.supported_graphics_clocks_mhz(handle, memory_mhz)) {
      clocks.push_back(core_mhz);
    }
  }
  std::sort(clocks.begin(), clocks.end());
  clocks.erase(std::unique(clocks.begin(), clocks.end()), clocks.end());
  return clocks;
}

ClockLock::ClockLock(unsigned int gpu, double min_mhz, double max_mhz)
    : ClockLock(load_for_clock_control(gpu), gpu, min_mhz, max_mhz) {}

ClockLock::ClockLock(std::shared_ptr<NvmlLibrary> library, unsigned int gpu, double min_mhz,
                     double max_mhz)
    : library_(std::move(library)) {
  // Upper bound only to keep the conversion to NVML's unsigned int defined.
  constexpr double kMaxClockMhz = 1e6;
  if (!(min_mhz > 0 && min_mhz <= max_mhz && max_mhz < kMaxClockMhz)) {
    throw InvalidInput(fmt::format(
        "clock lock of GPU {}: expected 0 < min ≤ max MHz, found min {} MHz, max {} MHz", gpu,
        min_mhz, max_mhz));
  }
  min_mhz_ = whole_mhz(min_mhz);
  max_mhz_ = whole_mhz(max_mhz);
  gpu_ = library_->gpu(gpu);
  for (const std::string& line : reset_clocks_left_locked(*library_)) {
    std::fprintf(stderr, "nnergy: warning: %s\n", line.c_str());
  }
  // The slot is active before the clocks are locked: a signal in between then resets clocks that
  // are not locked yet (harmless) instead of missing clocks that are.
  slot_ =
      claim_slot(library_->reset_locked_clocks_function(), gpu_, lock_file(gpu_.index).string());
  try {
    library_->set_locked_clocks(gpu_, min_mhz_, max_mhz_);
  } catch (...) {
    release_slot(std::exchange(slot_, kNoSlot));
    throw;
  }
  write_lock_file(gpu_.index, min_mhz_, max_mhz_);
}

ClockLock::~ClockLock() {
  if (!active()) return;
  try {
    reset();
  } catch (const std::exception& e) {
    std::fprintf(stderr,
                 "nnergy: warning: %s; the clocks of GPU %u may still be locked (reset them as "
                 "root with `nvidia-smi --reset-gpu-clocks -i %u`)\n",
                 e.what(), gpu_.index, gpu_.index);
  }
}

void ClockLock::reset() {
  if (!active()) return;
  // Reset first, release the slot after: a signal in between resets twice, which is harmless,
  // whereas the other order could let the process die with the clocks still locked.
  const std::size_t slot = std::exchange(slot_, kNoSlot);
  try {
    library_->reset_locked_clocks(gpu_);
  } catch (...) {
    release_slot(slot);
    throw;
  }
  remove_lock_file(gpu_.index);
  release_slot(slot);
}

}  // namespace nnergy::measure
