#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace nnergy::measure {

/// The slice of NVML's C ABI that nnergy uses, declared here so that nnergy builds without
/// nvml.h and loads NVML at run time. Names and values follow nvml.h.
namespace nvml {

using Return = int;  ///< nvmlReturn_t
struct DeviceOpaque;
using Device = DeviceOpaque*;  ///< nvmlDevice_t: an opaque handle owned by NVML

inline constexpr Return kSuccess = 0;
inline constexpr Return kErrorInvalidArgument = 2;
inline constexpr Return kErrorNotSupported = 3;
inline constexpr Return kErrorNoPermission = 4;
inline constexpr Return kErrorInsufficientSize = 7;
inline constexpr Return kErrorGpuIsLost = 15;

/// nvmlClockType_t
inline constexpr int kClockGraphics = 0;
inline constexpr int kClockSm = 1;
inline constexpr int kClockMemory = 2;
/// nvmlTemperatureSensors_t: the GPU die sensor.
inline constexpr int kTemperatureGpu = 0;
/// NVML_FI_DEV_POWER_INSTANT: current (not averaged) board power, mW.
inline constexpr unsigned int kFieldPowerInstant = 186;

/// nvmlValueType_t
inline constexpr int kValueDouble = 0;
inline constexpr int kValueUnsignedInt = 1;
inline constexpr int kValueUnsignedLong = 2;
inline constexpr int kValueUnsignedLongLong = 3;
inline constexpr int kValueSignedLongLong = 4;
inline constexpr int kValueSignedInt = 5;
inline constexpr int kValueUnsignedShort = 6;

/// nvmlValue_t
union Value {
  double d_val;
  unsigned int ui_val;
  unsigned long ul_val;
  unsigned long long ull_val;
  long long sll_val;
  int si_val;
  unsigned short us_val;
};

/// nvmlFieldValue_t, member for member.
struct FieldValue {
  unsigned int field_id;
  unsigned int scope_id;
  long long timestamp_us;  ///< CPU time of the value, µs since 1970
  long long latency_us;
  int value_type;      ///< one of kValue*
  Return nvml_return;  ///< this field's own status; `value` is undefined unless kSuccess
  Value value;
};
static_assert(sizeof(Value) == 8);
static_assert(sizeof(FieldValue) == 40 && offsetof(FieldValue, value) == 32,
              "nvmlFieldValue_t layout of NVML's ABI");

/// nvmlProcessInfo_t (the v2 layout that nvmlDeviceGetComputeRunningProcesses_v2 and _v3 fill).
struct ProcessInfo {
  unsigned int pid;
  unsigned long long used_gpu_memory;
  unsigned int gpu_instance_id;
  unsigned int compute_instance_id;
};
static_assert(sizeof(ProcessInfo) == 24, "nvmlProcessInfo_t layout of NVML's ABI");

/// nvmlDeviceResetGpuLockedClocks
using ResetLockedClocksFunction = Return (*)(Device);

}  // namespace nvml

/// One GPU as NVML knows it.
struct NvmlGpu {
  unsigned int index = 0;         ///< NVML index (the order of nvidia-smi)
  nvml::Device handle = nullptr;  ///< valid while the NvmlLibrary that returned it is alive
};

class NvmlLibrary;

/// The outcome of loading NVML: the library, or why it is not available on this machine.
struct NvmlLoadResult {
  std::shared_ptr<NvmlLibrary> library;  ///< null when NVML is not available
  std::string unavailable_reason;        ///< e.g. "libnvidia-ml.so.1 not found (no NVIDIA driver)"
};

/// NVML loaded at run time with dlopen and initialised with nvmlInit_v2.
///
/// Instances are shared per library path while in use: `load` returns the live instance when one
/// exists, so nvmlInit_v2 runs once however many sources and clock locks use NVML, and
/// nvmlShutdown runs when the last shared_ptr goes. A later `load` initialises NVML afresh (this
/// is how a program, or a test with another fake NVML script, reloads it). The shared object
/// itself stays mapped for the life of the process: unloading a driver library is unsafe (it may
/// leave threads behind, and a signal handler may still hold one of its entry points).
///
/// Calls that fail throw DeviceError naming the NVML function, the GPU, nvmlErrorString's text and
/// the code. Readings a GPU or driver may lack (NVML_ERROR_NOT_SUPPORTED, or an entry point older
/// drivers do not export) return std::nullopt instead. Every member is thread-safe (NVML is).
/// Powers are W, energies J, clocks MHz, temperatures °C: the vendor units mW and mJ are
/// converted here.
class NvmlLibrary {
 public:
  /// The library `load()` opens: `$NNERGY_NVML_LIBRARY` when set and not empty, else
  /// "libnvidia-ml.so.1".
  static std::string default_path();
  /// Loads and initialises NVML from `path` (a file name searched like dlopen does, or a path), or
  /// shares the instance already loaded from it. A missing library, a library without NVML's
  /// required entry points and a failing nvmlInit_v2 are reported in `unavailable_reason`, not
  /// thrown. Thread-safe.
  static NvmlLoadResult load(const std::string& path = default_path());

  ~NvmlLibrary();  ///< nvmlShutdown
  NvmlLibrary(const NvmlLibrary&) = delete;
  NvmlLibrary& operator=(const NvmlLibrary&) = delete;

  /// The path it was loaded from.
  const std::string& path() const { return path_; }

  /// nvmlErrorString: e.g. "GPU is lost".
  std::string error_string(nvml::Return code) const;
  /// nvmlSystemGetDriverVersion, e.g. "550.54.15".
  std::string driver_version() const;
  /// nvmlDeviceGetCount_v2.
  unsigned int device_count() const;
  /// nvmlDeviceGetHandleByIndex_v2. Throws InvalidInput listing the valid indices when there is no
  /// GPU `index`.
  NvmlGpu gpu(unsigned int index) const;

  /// nvmlDeviceGetName, e.g. "NVIDIA H100 80GB HBM3".
  std::string name(const NvmlGpu& gpu) const;
  /// nvmlDeviceGetUUID, e.g. "GPU-6ad1...".
  std::string uuid(const NvmlGpu& gpu) const;
  /// nvmlDeviceGetPowerUsage, W: on Ampere and newer an average over about 1 s.
  std::optional<double> average_power_w(const NvmlGpu& gpu) const;
  /// nvmlDeviceGetFieldValues(NVML_FI_DEV_POWER_INSTANT), W; nullopt on drivers that lack the
  /// field.
  std::optional<double> instant_power_w(const NvmlGpu& gpu) const;
  /// nvmlDeviceGetTotalEnergyConsumption, J since the driver was loaded (Volta and newer).
  std::optional<double> total_energy_j(const NvmlGpu& gpu) const;
  /// nvmlDeviceGetClockInfo for `clock_type` (nvml::kClockGraphics, kClockSm, kClockMemory), MHz.
  std::optional<double> clock_mhz(const NvmlGpu& gpu, int clock_type) const;
  /// nvmlDeviceGetTemperature(NVML_TEMPERATURE_GPU), °C.
  std::optional<double> temperature_c(const NvmlGpu& gpu) const;
  /// Active clock-event (throttle) reason bits: nvmlDeviceGetCurrentClocksEventReasons, or
  /// nvmlDeviceGetCurrentClocksThrottleReasons on drivers older than 535.
  std::optional<std::uint64_t> clock_event_reasons(const NvmlGpu& gpu) const;
  /// nvmlDeviceGetEnforcedPowerLimit, W.
  std::optional<double> power_limit_w(const NvmlGpu& gpu) const;
  /// Process ids of the compute processes running on the GPU
  /// (nvmlDeviceGetComputeRunningProcesses_v3, else _v2); nullopt when the driver lacks both or
  /// the GPU does not report them. PIDs are those of the host's PID namespace.
  std::optional<std::vector<unsigned int>> compute_process_ids(const NvmlGpu& gpu) const;

  /// nvmlDeviceGetSupportedMemoryClocks, MHz in NVML's order; empty when not reported.
  std::vector<unsigned int> supported_memory_clocks_mhz(const NvmlGpu& gpu) const;
  /// nvmlDeviceGetSupportedGraphicsClocks at `memory_clock_mhz`, MHz in NVML's order; empty when
  /// not reported.
  std::vector<unsigned int> supported_graphics_clocks_mhz(const NvmlGpu& gpu,
                                                          unsigned int memory_clock_mhz) const;
  /// nvmlDeviceSetGpuLockedClocks: holds the core clock in [min_mhz, max_mhz]. Needs root.
  /// Throws DeviceError "locking clocks of GPU N needs root (NVML_ERROR_NO_PERMISSION)", or one
  /// saying the GPU or driver does not support it, or naming the call and code.
  void set_locked_clocks(const NvmlGpu& gpu, unsigned int min_mhz, unsigned int max_mhz) const;
  /// nvmlDeviceResetGpuLockedClocks: back to the driver's default clock policy.
  void reset_locked_clocks(const NvmlGpu& gpu) const;
  /// The raw nvmlDeviceResetGpuLockedClocks entry point, for a signal handler, where nothing may
  /// throw; null when the driver lacks it. Valid for the life of the process.
  nvml::ResetLockedClocksFunction reset_locked_clocks_function() const;

 private:
  struct Functions;
  NvmlLibrary(std::string path, std::unique_ptr<const Functions> functions);
  [[noreturn]] void fail(const char* function, const NvmlGpu* gpu, nvml::Return code) const;
  void check(const char* function, const NvmlGpu* gpu, nvml::Return code) const;
  bool supported(const char* function, const NvmlGpu& gpu, nvml::Return code) const;

  std::string path_;
  std::unique_ptr<const Functions> f_;
};

}  // namespace nnergy::measure
