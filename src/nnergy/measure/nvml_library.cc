#include "nnergy/measure/nvml_library.h"

#include <dlfcn.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <mutex>
#include <type_traits>

#include "nnergy/core/error.h"

namespace nnergy::measure {

namespace {

using nvml::Device;
using nvml::Return;

constexpr const char* kDefaultLibrary = "libnvidia-ml.so.1";
// Buffer sizes nvml.h guarantees to be large enough (NVML_DEVICE_NAME_V2_BUFFER_SIZE,
// NVML_DEVICE_UUID_V2_BUFFER_SIZE, NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE).
constexpr unsigned int kNameBufferSize = 96;
constexpr unsigned int kUuidBufferSize = 96;
constexpr unsigned int kDriverVersionBufferSize = 80;
// A first guess for the supported-clock lists; NVML says how many it needs when it is too small.
constexpr unsigned int kInitialClockListSize = 256;
// Compute processes read per call at first; more when NVML asks for more.
constexpr unsigned int kInitialProcessListSize = 64;

// NVML reports power in milliwatts; this is the one place that converts it.
double milliwatts_to_watts(double milliwatts) { return milliwatts / 1000.0; }

// NVML reports energy in millijoules; this is the one place that converts it.
double millijoules_to_joules(double millijoules) { return millijoules / 1000.0; }

// A field value as a double, whichever member of the union NVML filled.
double field_value_as_double(const nvml::FieldValue& field) {
  switch (field.value_type) {
    case nvml::kValueDouble:
      return field.value.d_val;
    case nvml::kValueUnsignedInt:
      return field.value.ui_val;
    case nvml::kValueUnsignedLong:
      return static_cast<double>(field.value.ul_val);
    case nvml::kValueUnsignedLongLong:
      return static_cast<double>(field.value.ull_val);
    case nvml::kValueSignedLongLong:
      return static_cast<double>(field.value.sll_val);
    case nvml::kValueSignedInt:
      return field.value.si_val;
    case nvml::kValueUnsignedShort:
      return field.value.us_val;
    default:
      throw DeviceError(
          fmt::format("nvmlDeviceGetFieldValues returned field {} with unknown value type {}",
                      field.field_id, field.value_type));
  }
}

// dlsym returns an object pointer; POSIX guarantees it converts to the function's type.
template <typename Function>
Function resolve(void* handle, const char* symbol) {
  return reinterpret_cast<Function>(dlsym(handle, symbol));
}

}  // namespace

struct NvmlLibrary::Functions {
  Return (*init)() = nullptr;
  Return (*shutdown)() = nullptr;
  const char* (*error_string)(Return) = nullptr;
  Return (*system_get_driver_version)(char*, unsigned int) = nullptr;
  Return (*device_get_count)(unsigned int*) = nullptr;
  Return (*device_get_handle_by_index)(unsigned int, Device*) = nullptr;
  Return (*device_get_name)(Device, char*, unsigned int) = nullptr;
  Return (*device_get_uuid)(Device, char*, unsigned int) = nullptr;
  Return (*device_get_power_usage)(Device, unsigned int*) = nullptr;
  Return (*device_get_clock_info)(Device, int, unsigned int*) = nullptr;
  // The entry points below may be missing from older drivers; a missing one reads as unsupported.
  Return (*device_get_total_energy_consumption)(Device, unsigned long long*) = nullptr;
  Return (*device_get_field_values)(Device, int, nvml::FieldValue*) = nullptr;
  Return (*device_get_temperature)(Device, int, unsigned int*) = nullptr;
  Return (*device_get_clock_event_reasons)(Device, unsigned long long*) = nullptr;
  const char* clock_event_reasons_symbol = "nvmlDeviceGetCurrentClocksEventReasons";
  Return (*device_get_enforced_power_limit)(Device, unsigned int*) = nullptr;
  Return (*device_get_compute_processes)(Device, unsigned int*, nvml::ProcessInfo*) = nullptr;
  const char* compute_processes_symbol = "nvmlDeviceGetComputeRunningProcesses_v3";
  Return (*device_get_supported_memory_clocks)(Device, unsigned int*, unsigned int*) = nullptr;
  Return (*device_get_supported_graphics_clocks)(Device, unsigned int, unsigned int*,
                                                 unsigned int*) = nullptr;
  Return (*device_set_gpu_locked_clocks)(Device, unsigned int, unsigned int) = nullptr;
  nvml::ResetLockedClocksFunction device_reset_gpu_locked_clocks = nullptr;
};

std::string NvmlLibrary::default_path() {
  const char* path = std::getenv("NNERGY_NVML_LIBRARY");
  return path != nullptr && *path != '\0' ? std::string(path) : std::string(kDefaultLibrary);
}

NvmlLoadResult NvmlLibrary::load(const std::string& path) {
  // One instance per path while in use, so that nvmlInit_v2/nvmlShutdown pair up per process.
  static std::mutex mutex;
  static std::map<std::string, std::weak_ptr<NvmlLibrary>> live;
  const std::lock_guard<std::mutex> lock(mutex);
  if (auto existing = live[path].lock()) return {existing, ""};

  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* error = dlerror();
    const std::string detail = error != nullptr ? error : "";
    if (detail.find("No such file") != std::string::npos || detail.empty()) {
      return {nullptr, path + " not found (no NVIDIA driver)"};
    }
    return {nullptr, path + " could not be loaded: " + detail};
  }

  auto f = std::make_unique<Functions>();
  const char* missing = nullptr;
  auto required = [&](auto& function, const char* symbol) {
    function = resolve<std::remove_reference_t<decltype(function)>>(handle, symbol);
    if (function == nullptr && missing == nullptr) missing = symbol;
  };
  required(f->init, "nvmlInit_v2");
  required(f->shutdown, "nvmlShutdown");
  required(f->error_string, "nvmlErrorString");
  required(f->system_get_driver_version, "nvmlSystemGetDriverVersion");
  required(f->device_get_count, "nvmlDeviceGetCount_v2");
  required(f->device_get_handle_by_index, "nvmlDeviceGetHandleByIndex_v2");
  required(f->device_get_name, "nvmlDeviceGetName");
  required(f->device_get_uuid, "nvmlDeviceGetUUID");
  required(f->device_get_power_usage, "nvmlDeviceGetPowerUsage");
  required(f->device_get_clock_info, "nvmlDeviceGetClockInfo");
  if (missing != nullptr) {
    // Not an NVML library at all (or a driver from before 2017): nothing of it was used.
    dlclose(handle);
    return {nullptr,
            fmt::format("{} lacks {} (not NVML, or an NVIDIA driver too old)", path, missing)};
  }
  auto optional = [&](auto& function, const char* symbol) {
    function = resolve<std::remove_reference_t<decltype(function)>>(handle, symbol);
  };
  optional(f->device_get_total_energy_consumption, "nvmlDeviceGetTotalEnergyConsumption");
  optional(f->device_get_field_values, "nvmlDeviceGetFieldValues");
  optional(f->device_get_temperature, "nvmlDeviceGetTemperature");
  optional(f->device_get_clock_event_reasons, f->clock_event_reasons_symbol);
  if (f->device_get_clock_event_reasons == nullptr) {
    // Drivers before 535 name it "throttle reasons"; same signature, same bits.
    f->clock_event_reasons_symbol = "nvmlDeviceGetCurrentClocksThrottleReasons";
    optional(f->device_get_clock_event_reasons, f->clock_event_reasons_symbol);
  }
  optional(f->device_get_enforced_power_limit, "nvmlDeviceGetEnforcedPowerLimit");
  optional(f->device_get_compute_processes, f->compute_processes_symbol);
  if (f->device_get_compute_processes == nullptr) {
    // Drivers before 510 have _v2, with the same nvmlProcessInfo_t layout.
    f->compute_processes_symbol = "nvmlDeviceGetComputeRunningProcesses_v2";
    optional(f->device_get_compute_processes, f->compute_processes_symbol);
  }
  optional(f->device_get_supported_memory_clocks, "nvmlDeviceGetSupportedMemoryClocks");
  optional(f->device_get_supported_graphics_clocks, "nvmlDeviceGetSupportedGraphicsClocks");
  optional(f->device_set_gpu_locked_clocks, "nvmlDeviceSetGpuLockedClocks");
  optional(f->device_reset_gpu_locked_clocks, "nvmlDeviceResetGpuLockedClocks");

  const Return code = f->init();
  if (code != nvml::kSuccess) {
    // Typically NVML_ERROR_DRIVER_NOT_LOADED: the user-space library is installed (e.g. in a
    // container) but no kernel driver runs. That is absence, not a failure of ours.
    const char* text = f->error_string(code);
    return {nullptr, fmt::format("nvmlInit_v2 failed: {} (NVML error {})",
                                 text != nullptr ? text : "unknown error", code)};
  }
  std::shared_ptr<NvmlLibrary> library(new NvmlLibrary(path, std::move(f)));
  live[path] = library;
  return {library, ""};
}

NvmlLibrary::NvmlLibrary(std::string path, std::unique_ptr<const Functions> functions)
    : path_(std::move(path)), f_(std::move(functions)) {}

NvmlLibrary::~NvmlLibrary() {
  // Nothing can be done about a failing shutdown at this point; NVML releases its state anyway.
  f_->shutdown();
}

std::string NvmlLibrary::error_string(Return code) const {
  const char* text = f_->error_string(code);
  return text != nullptr ? text : "unknown error";
}

void NvmlLibrary::fail(const char* function, const NvmlGpu* gpu, Return code) const {
  throw DeviceError(fmt::format("{}{} failed: {} (NVML error {})", function,
                                gpu != nullptr ? fmt::format(" for GPU {}", gpu->index) : "",
                                error_string(code), code));
}

void NvmlLibrary::check(const char* function, const NvmlGpu* gpu, Return code) const {
  if (code != nvml::kSuccess) fail(function, gpu, code);
}

std::string NvmlLibrary::driver_version() const {
  char buffer[kDriverVersionBufferSize] = {};
  check("nvmlSystemGetDriverVersion", nullptr,
        f_->system_get_driver_version(buffer, kDriverVersionBufferSize));
  return buffer;
}

unsigned int NvmlLibrary::device_count() const {
  unsigned int count = 0;
  check("nvmlDeviceGetCount_v2", nullptr, f_->device_get_count(&count));
  return count;
}

NvmlGpu NvmlLibrary::gpu(unsigned int index) const {
  const unsigned int count = device_count();
  if (index >= count) {
    std::vector<std::string> valid;
    for (unsigned int i = 0; i < count; ++i) valid.push_back(std::to_string(i));
    throw InvalidInput(fmt::format("there is no GPU {}; GPU indices here: {}", index,
                                   count == 0 ? "none" : join_with_commas(valid)));
  }
  NvmlGpu gpu{index, nullptr};
  check("nvmlDeviceGetHandleByIndex_v2", &gpu, f_->device_get_handle_by_index(index, &gpu.handle));
  return gpu;
}

std::string NvmlLibrary::name(const NvmlGpu& gpu) const {
  char buffer[kNameBufferSize] = {};
  check("nvmlDeviceGetName", &gpu, f_->device_get_name(gpu.handle, buffer, kNameBufferSize));
  return buffer;
}

std::string NvmlLibrary::uuid(const NvmlGpu& gpu) const {
  char buffer[kUuidBufferSize] = {};
  check("nvmlDeviceGetUUID", &gpu, f_->device_get_uuid(gpu.handle, buffer, kUuidBufferSize));
  return buffer;
}

bool NvmlLibrary::supported(const char* function, const NvmlGpu& gpu, Return code) const {
  // The optional readings share one rule: success gives a value, NOT_SUPPORTED gives nullopt,
  // anything else (e.g. GPU_IS_LOST) is a device failure.
  if (code == nvml::kErrorNotSupported) return false;
  check(function, &gpu, code);
  return true;
}

std::optional<double> NvmlLibrary::average_power_w(const NvmlGpu& gpu) const {
  unsigned int milliwatts = 0;
  if (!supported("nvmlDeviceGetPowerUsage", gpu,
                 f_->device_get_power_usage(gpu.handle, &milliwatts))) {
    return std::nullopt;
  }
  return milliwatts_to_watts(milliwatts);
}

std::optional<double> NvmlLibrary::instant_power_w(const NvmlGpu& gpu) const {
  if (f_->device_get_field_values == nullptr) return std::nullopt;
  nvml::FieldValue field{};
  field.field_id = nvml::kFieldPowerInstant;
  if (!supported("nvmlDeviceGetFieldValues(NVML_FI_DEV_POWER_INSTANT)", gpu,
                 f_->device_get_field_values(gpu.handle, 1, &field))) {
    return std::nullopt;
  }
  // Drivers that predate the field answer the call but flag the field itself.
  if (field.nvml_return == nvml::kErrorNotSupported ||
      field.nvml_return == nvml::kErrorInvalidArgument) {
    return std::nullopt;
  }
  check("nvmlDeviceGetFieldValues(NVML_FI_DEV_POWER_INSTANT)", &gpu, field.nvml_return);
  return milliwatts_to_watts(field_value_as_double(field));
}

std::optional<double> NvmlLibrary::total_energy_j(const NvmlGpu& gpu) const {
  if (f_->device_get_total_energy_consumption == nullptr) return std::nullopt;
  unsigned long long millijoules = 0;
  if (!supported("nvmlDeviceGetTotalEnergyConsumption", gpu,
                 f_->device_get_total_energy_consumption(gpu.handle, &millijoules))) {
    return std::nullopt;
  }
  return millijoules_to_joules(static_cast<double>(millijoules));
}

std::optional<double> NvmlLibrary::clock_mhz(const NvmlGpu& gpu, int clock_type) const {
  unsigned int mhz = 0;
  if (!supported("nvmlDeviceGetClockInfo", gpu,
                 f_->device_get_clock_info(gpu.handle, clock_type, &mhz))) {
    return std::nullopt;
  }
  return mhz;
}

std::optional<double> NvmlLibrary::temperature_c(const NvmlGpu& gpu) const {
  if (f_->device_get_temperature == nullptr) return std::nullopt;
  unsigned int celsius = 0;
  if (!supported("nvmlDeviceGetTemperature", gpu,
                 f_->device_get_temperature(gpu.handle, nvml::kTemperatureGpu, &celsius))) {
    return std::nullopt;
  }
  return celsius;
}

std::optional<std::uint64_t> NvmlLibrary::clock_event_reasons(const NvmlGpu& gpu) const {
  if (f_->device_get_clock_event_reasons == nullptr) return std::nullopt;
  unsigned long long reasons = 0;
  if (!supported(f_->clock_event_reasons_symbol, gpu,
                 f_->device_get_clock_event_reasons(gpu.handle, &reasons))) {
    return std::nullopt;
  }
  return reasons;
}

std::optional<double> NvmlLibrary::power_limit_w(const NvmlGpu& gpu) const {
  if (f_->device_get_enforced_power_limit == nullptr) return std::nullopt;
  unsigned int milliwatts = 0;
  if (!supported("nvmlDeviceGetEnforcedPowerLimit", gpu,
                 f_->device_get_enforced_power_limit(gpu.handle, &milliwatts))) {
    return std::nullopt;
  }
  return milliwatts_to_watts(milliwatts);
}

std::optional<std::vector<unsigned int>> NvmlLibrary::compute_process_ids(
    const NvmlGpu& gpu) const {
  if (f_->device_get_compute_processes == nullptr) return std::nullopt;
  // The list can grow between the sizing call and the reading one: retry with the larger count.
  std::vector<nvml::ProcessInfo> infos(kInitialProcessListSize);
  for (;;) {
    unsigned int count = static_cast<unsigned int>(infos.size());
    const Return code = f_->device_get_compute_processes(gpu.handle, &count, infos.data());
    if (code == nvml::kErrorInsufficientSize && count > infos.size()) {
      infos.resize(count);
      continue;
    }
    if (!supported(f_->compute_processes_symbol, gpu, code)) return std::nullopt;
    std::vector<unsigned int> pids;
    for (unsigned int i = 0; i < count && i < infos.size(); ++i) pids.push_back(infos[i].pid);
    return pids;
  }
}

namespace {

// NVML's two-step list protocol: a too-small buffer returns INSUFFICIENT_SIZE with the count it
// needs. `call(count, data)` is one attempt; NOT_SUPPORTED gives an empty list.
template <typename Call, typename Check>
std::vector<unsigned int> read_clock_list(Call call, Check check) {
  std::vector<unsigned int> clocks(kInitialClockListSize);
  for (;;) {
    unsigned int count = static_cast<unsigned int>(clocks.size());
    const Return code = call(&count, clocks.data());
    if (code == nvml::kErrorInsufficientSize && count > clocks.size()) {
      clocks.resize(count);
      continue;
    }
    if (code == nvml::kErrorNotSupported) return {};
    check(code);
    clocks.resize(std::min<std::size_t>(count, clocks.size()));
    return clocks;
  }
}

}  // namespace

std::vector<unsigned int> NvmlLibrary::supported_memory_clocks_mhz(const NvmlGpu& gpu) const {
  if (f_->device_get_supported_memory_clocks == nullptr) return {};
  return read_clock_list(
      [&](unsigned int* count, unsigned int* data) {
        return f_->device_get_supported_memory_clocks(gpu.handle, count, data);
      },
      [&](Return code) { check("nvmlDeviceGetSupportedMemoryClocks", &gpu, code); });
}

std::vector<unsigned int> NvmlLibrary::supported_graphics_clocks_mhz(
    const NvmlGpu& gpu, unsigned int memory_clock_mhz) const {
  if (f_->device_get_supported_graphics_clocks == nullptr) return {};
  return read_clock_list(
      [&](unsigned int* count, unsigned int* data) {
        return f_->device_get_supported_graphics_clocks(gpu.handle, memory_clock_mhz, count, data);
      },
      [&](Return code) { check("nvmlDeviceGetSupportedGraphicsClocks", &gpu, code); });
}

void NvmlLibrary::set_locked_clocks(const NvmlGpu& gpu, unsigned int min_mhz,
                                    unsigned int max_mhz) const {
  if (f_->device_set_gpu_locked_clocks == nullptr) {
    throw DeviceError(
        fmt::format("locking clocks of GPU {} is not supported by this NVIDIA driver (no "
                    "nvmlDeviceSetGpuLockedClocks in {})",
                    gpu.index, path_));
  }
  const Return code = f_->device_set_gpu_locked_clocks(gpu.handle, min_mhz, max_mhz);
  if (code == nvml::kErrorNoPermission) {
    throw DeviceError(
        fmt::format("locking clocks of GPU {} needs root (NVML_ERROR_NO_PERMISSION)", gpu.index));
  }
  if (code == nvml::kErrorNotSupported) {
    throw DeviceError(fmt::format(
        "locking clocks of GPU {} is not supported by this GPU (NVML_ERROR_NOT_SUPPORTED)",
        gpu.index));
  }
  check("nvmlDeviceSetGpuLockedClocks", &gpu, code);
}

void NvmlLibrary::reset_locked_clocks(const NvmlGpu& gpu) const {
  if (f_->device_reset_gpu_locked_clocks == nullptr) {
    throw DeviceError(
        fmt::format("resetting clocks of GPU {} is not supported by this NVIDIA driver (no "
                    "nvmlDeviceResetGpuLockedClocks in {})",
                    gpu.index, path_));
  }
  check("nvmlDeviceResetGpuLockedClocks", &gpu, f_->device_reset_gpu_locked_clocks(gpu.handle));
}

nvml::ResetLockedClocksFunction NvmlLibrary::reset_locked_clocks_function() const {
  return f_->device_reset_gpu_locked_clocks;
}

}  // namespace nnergy::measure
