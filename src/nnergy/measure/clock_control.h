#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "nnergy/measure/nvml_library.h"

namespace nnergy::measure {

/// Core (graphics) clocks GPU `gpu` can run at, MHz, ascending and without duplicates: the
/// graphics clocks NVML lists for every supported memory clock. Empty when the GPU does not report
/// them (many consumer GPUs). `library` defaults to NvmlLibrary::load(); throws DeviceError when
/// NVML is not available or a call fails, InvalidInput when there is no GPU `gpu`. Thread-safe.
std::vector<double> supported_core_clocks_mhz(unsigned int gpu);
std::vector<double> supported_core_clocks_mhz(const NvmlLibrary& library, unsigned int gpu);

/// Core clocks to lock one after the other, from a comma-separated list of whole MHz where
/// "default" (or 0) is the unlocked default clock: "900,1200,default" → {900, 1200, 0}; empty
/// text → {}. Throws InvalidInput naming `setting` and the item that is not a clock.
std::vector<std::int64_t> parse_clock_list(const std::string& text, std::string_view setting);

/// Holds the core clock of one GPU in a range (nvmlDeviceSetGpuLockedClocks) for its lifetime and
/// always undoes it (nvmlDeviceResetGpuLockedClocks): in the destructor, so also when an exception
/// unwinds, and on every catchable signal that ends a process (SIGINT, SIGTERM, SIGHUP, SIGQUIT,
/// SIGUSR1, SIGUSR2, SIGPIPE, SIGALRM, SIGXCPU, SIGABRT). While any lock is held, handlers for
/// those signals reset every active lock, put the previous handler back and raise the signal
/// again, so the process still ends (or handles it) as it would have; the previous handlers are
/// restored when the last lock goes. A signal whose disposition was SIG_IGN is left alone.
///
/// SIGKILL cannot be caught: while a lock is held, a lock file (clock_lock_directory()/
/// gpu-N.lock: the process id and the range) says so, and the next ClockLock of any GPU first
/// resets the clocks a process that ended without removing its file left locked, saying so on
/// stderr (reset_clocks_left_locked).
///
/// Locking clocks needs root. At most kMaxActiveLocks locks at once per process, and one per GPU.
/// Constructing and destroying locks is thread-safe; a ClockLock itself is not shared.
/// Where clock lock files go: $NNERGY_CLOCK_LOCK_DIR, else /run/nnergy (root's, as locking is).
std::filesystem::path clock_lock_directory();

/// Resets the clocks of every GPU whose lock file names a process that no longer runs (it was
/// killed with SIGKILL, or the machine lost power), removes those files and returns one line
/// per GPU reset, e.g. "the clocks of GPU 0 were left locked at 900-900 MHz by process 4242,
/// which ended without resetting them: reset now". A reset that fails is said the same way.
std::vector<std::string> reset_clocks_left_locked(NvmlLibrary& library);

class ClockLock {
 public:
  static constexpr std::size_t kMaxActiveLocks = 64;

  /// Locks GPU `gpu` to [min_mhz, max_mhz] (rounded to whole MHz; the driver uses the supported
  /// clocks within the range); min_mhz == max_mhz pins one clock. `library` defaults to
  /// NvmlLibrary::load(). Throws InvalidInput for an empty or non-positive range, a missing GPU or
  /// a GPU this process has already locked; DeviceError when NVML is not available or refuses
  /// ("locking clocks of GPU N needs root (NVML_ERROR_NO_PERMISSION)", or not supported).
  ClockLock(unsigned int gpu, double min_mhz, double max_mhz);
  ClockLock(std::shared_ptr<NvmlLibrary> library, unsigned int gpu, double min_mhz, double max_mhz);
  /// Resets the clocks unless `reset` already did; a failure is reported on stderr, since a
  /// destructor cannot throw and clocks left locked must not go unnoticed.
  ~ClockLock();
  ClockLock(const ClockLock&) = delete;
  ClockLock& operator=(const ClockLock&) = delete;

  /// Resets the clocks now (idempotent). Throws DeviceError when NVML fails.
  void reset();

  unsigned int gpu() const { return gpu_.index; }
  unsigned int min_mhz() const { return min_mhz_; }  ///< as sent to NVML
  unsigned int max_mhz() const { return max_mhz_; }  ///< as sent to NVML
  /// False once reset.
  bool active() const { return slot_ != kNoSlot; }

 private:
  static constexpr std::size_t kNoSlot = kMaxActiveLocks;

  std::shared_ptr<NvmlLibrary> library_;
  NvmlGpu gpu_;
  unsigned int min_mhz_ = 0;
  unsigned int max_mhz_ = 0;
  std::size_t slot_ = kNoSlot;  ///< index in the process-wide table the signal handler reads
};

}  // namespace nnergy::measure
