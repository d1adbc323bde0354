// A scriptable stand-in for libnvidia-ml.so.1, so that the NVML code runs its real dlopen, symbol
// resolution, unit conversion and error handling in tests on machines without a GPU.
//
// It declares NVML's types itself, from nvml.h's ABI and independently of nnergy's declarations.
// On every nvmlInit_v2 that finds it uninitialised it (re)reads the script named by
// $NNERGY_FAKE_NVML_SCRIPT. One directive per line, '#' starts a comment:
//
//   gpus N                       number of GPUs (default 1, at most 16)
//   driver VERSION               nvmlSystemGetDriverVersion (default 550.54.15)
//   log PATH                     append "init", "shutdown", "lock_clocks GPU MIN MAX" and
//                                "reset_clocks GPU" lines to PATH as they happen
//   name GPU TEXT...             nvmlDeviceGetName (default "Fake GPU <i>")
//   uuid GPU TEXT                nvmlDeviceGetUUID (default "GPU-fake-<i>")
//   SERIES GPU V1 V2 ...         successive values of a reading, the last one repeating; a
//                                reading without a series answers NVML_ERROR_NOT_SUPPORTED.
//                                SERIES: power_mw (nvmlDeviceGetPowerUsage), instant_mw (field
//                                NVML_FI_DEV_POWER_INSTANT), energy_mj, clock_graphics_mhz,
//                                clock_sm_mhz, clock_mem_mhz, temperature_c, reasons,
//                                power_limit_mw
//   energy_rate_mw GPU MW        the energy counter counts MW milliwatts of wall time since the
//                                first nvmlInit_v2 of the process (a live GPU at constant power);
//                                takes precedence over an energy_mj series
//   processes GPU PID...         nvmlDeviceGetComputeRunningProcesses_v3/_v2 (default: none
//                                listed, NVML_ERROR_NOT_SUPPORTED)
//   memory_clocks GPU M1 M2 ...  nvmlDeviceGetSupportedMemoryClocks
//   graphics_clocks GPU M C1 ... nvmlDeviceGetSupportedGraphicsClocks at memory clock M
//   fail CALL CODE [after N] [gpu G]
//                                CALL returns CODE after N successful calls (default 0), on GPU G
//                                or on every GPU. CALL: init, driver, count, handle, name, uuid,
//                                power, instant_power, energy, clock, temperature, reasons,
//                                power_limit, processes, supported_clocks, lock_clocks,
//                                reset_clocks
//
// Built a second time with NNERGY_FAKE_NVML_OLD_DRIVER, it lacks
// nvmlDeviceGetCurrentClocksEventReasons, as drivers before 535 do.

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

extern "C" {
typedef int nvmlReturn_t;
typedef struct nvmlDevice_st* nvmlDevice_t;
typedef union nvmlValue_st {
  double dVal;
  unsigned int uiVal;
  unsigned long ulVal;
  unsigned long long ullVal;
  long long sllVal;
  int siVal;
  unsigned short usVal;
} nvmlValue_t;
typedef struct nvmlFieldValue_st {
  unsigned int fieldId;
  unsigned int scopeId;
  long long timestamp;
  long long latencyUsec;
  int valueType;
  nvmlReturn_t nvmlReturn;
  nvmlValue_t value;
} nvmlFieldValue_t;
typedef struct nvmlProcessInfo_st {
  unsigned int pid;
  unsigned long long usedGpuMemory;
  unsigned int gpuInstanceId;
  unsigned int computeInstanceId;
} nvmlProcessInfo_t;
}

namespace {

constexpr nvmlReturn_t kSuccess = 0;
constexpr nvmlReturn_t kUninitialized = 1;
constexpr nvmlReturn_t kInvalidArgument = 2;
constexpr nvmlReturn_t kNotSupported = 3;
constexpr nvmlReturn_t kNotFound = 6;
constexpr nvmlReturn_t kInsufficientSize = 7;
constexpr nvmlReturn_t kUnknown = 999;
constexpr unsigned int kFieldPowerInstant = 186;
constexpr int kValueUnsignedInt = 1;
constexpr int kClockGraphics = 0;
constexpr int kClockSm = 1;
constexpr int kClockMemory = 2;
constexpr int kMaxGpus = 16;

struct Series {
  std::vector<unsigned long long> values;
  std::size_t next = 0;
};

struct Failure {
  nvmlReturn_t code = kSuccess;
  long after = 0;
  long calls = 0;
};

struct Gpu {
  std::string name;
  std::string uuid;
  std::map<std::string, Series> series;
  std::map<std::string, Failure> failures;
  std::vector<unsigned int> memory_clocks;
  std::map<unsigned int, std::vector<unsigned int>> graphics_clocks;
  unsigned long long energy_rate_mw = 0;  // 0: the energy_mj series
  bool has_processes = false;
  std::vector<unsigned int> processes;
};

struct State {
  std::mutex mutex;
  int init_count = 0;
  int gpu_count = 1;
  std::string driver;
  std::string log_path;
  std::map<std::string, Failure> global_failures;
  // The wall clock of energy_rate_mw counters: the first nvmlInit_v2 of the process.
  std::chrono::steady_clock::time_point first_init{};
  bool initialised_once = false;
  // Fixed storage: a handle is a pointer into it and stays valid across re-reads of the script.
  Gpu gpus[kMaxGpus];
};

State& state() {
  static State s;
  return s;
}

// Unbuffered open/write/close, so that lines written by a forked test child, possibly from a
// signal handler just before it dies, are all in the file when the parent reads it.
void log_line(const std::string& line) {
  const std::string& path = state().log_path;
  if (path.empty()) return;
  const int fd = open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT, 0644);
  if (fd < 0) return;
  const std::string text = line + "\n";
  if (write(fd, text.data(), text.size()) < 0) std::perror("fake_nvml: log");
  close(fd);
}

// The code to fail `call` with now, or kSuccess; counts the call.
nvmlReturn_t scripted_failure(std::map<std::string, Failure>& failures, const char* call) {
  auto it = failures.find(call);
  if (it == failures.end()) return kSuccess;
  Failure& f = it->second;
  return f.calls++ >= f.after ? f.code : kSuccess;
}

bool read_script(State& s, std::string& error) {
  s.gpu_count = 1;
  s.driver = "550.54.15";
  s.log_path.clear();
  s.global_failures.clear();
  for (int i = 0; i < kMaxGpus; ++i) {
    s.gpus[i] = Gpu{};
    s.gpus[i].name = "Fake GPU " + std::to_string(i);
    s.gpus[i].uuid = "GPU-fake-" + std::to_string(i);
  }
  const char* path = std::getenv("NNERGY_FAKE_NVML_SCRIPT");
  if (path == nullptr) return true;
  std::ifstream in(path);
  if (!in) {
    error = std::string("cannot read ") + path;
    return false;
  }
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (const auto hash = line.find('#'); hash != std::string::npos) line.erase(hash);
    std::istringstream words(line);
    std::string directive;
    if (!(words >> directive)) continue;
    const std::string where = std::string(path) + ":" + std::to_string(number) + ": ";
    auto gpu_argument = [&](Gpu*& gpu) {
      int index = -1;
      if (!(words >> index) || index < 0 || index >= kMaxGpus) {
        error = where + "expected a GPU index 0.." + std::to_string(kMaxGpus - 1);
        return false;
      }
      gpu = &s.gpus[index];
      return true;
    };
    Gpu* gpu = nullptr;
    if (directive == "gpus") {
      if (!(words >> s.gpu_count) || s.gpu_count < 0 || s.gpu_count > kMaxGpus) {
        error = where + "expected a GPU count";
        return false;
      }
    } else if (directive == "driver") {
      words >> s.driver;
    } else if (directive == "log") {
      words >> s.log_path;
    } else if (directive == "name" || directive == "uuid") {
      if (!gpu_argument(gpu)) return false;
      std::string text;
      std::getline(words >> std::ws, text);
      (directive == "name" ? gpu->name : gpu->uuid) = text;
    } else if (directive == "power_mw" || directive == "instant_mw" || directive == "energy_mj" ||
               directive == "clock_graphics_mhz" || directive == "clock_sm_mhz" ||
               directive == "clock_mem_mhz" || directive == "temperature_c" ||
               directive == "reasons" || directive == "power_limit_mw") {
      if (!gpu_argument(gpu)) return false;
      Series& series = gpu->series[directive];
      for (unsigned long long v = 0; words >> v;) series.values.push_back(v);
      if (series.values.empty()) {
        error = where + "expected at least one value";
        return false;
      }
    } else if (directive == "energy_rate_mw") {
      if (!gpu_argument(gpu) || !(words >> gpu->energy_rate_mw)) {
        error = where + "expected energy_rate_mw GPU MILLIWATTS";
        return false;
      }
    } else if (directive == "processes") {
      if (!gpu_argument(gpu)) return false;
      gpu->has_processes = true;
      for (unsigned int pid = 0; words >> pid;) gpu->processes.push_back(pid);
    } else if (directive == "memory_clocks") {
      if (!gpu_argument(gpu)) return false;
      for (unsigned int v = 0; words >> v;) gpu->memory_clocks.push_back(v);
    } else if (directive == "graphics_clocks") {
      unsigned int memory = 0;
      if (!gpu_argument(gpu) || !(words >> memory)) {
        error = where + "expected GPU MEMORY_MHZ CLOCK...";
        return false;
      }
      for (unsigned int v = 0; words >> v;) gpu->graphics_clocks[memory].push_back(v);
    } else if (directive == "fail") {
      std::string call;
      Failure failure;
      if (!(words >> call >> failure.code)) {
        error = where + "expected fail CALL CODE [after N] [gpu G]";
        return false;
      }
      int only_gpu = -1;
      for (std::string option; words >> option;) {
        if (option == "after" && (words >> failure.after)) continue;
        if (option == "gpu" && (words >> only_gpu)) continue;
        error = where + "unknown option " + option;
        return false;
      }
      if (call == "init" || call == "driver" || call == "count") {
        s.global_failures[call] = failure;
      } else {
        for (int i = 0; i < kMaxGpus; ++i) {
          if (only_gpu < 0 || only_gpu == i) s.gpus[i].failures[call] = failure;
        }
      }
    } else {
      error = where + "unknown directive " + directive;
      return false;
    }
  }
  return true;
}

Gpu* gpu_of(nvmlDevice_t device) {
  State& s = state();
  for (int i = 0; i < s.gpu_count; ++i) {
    if (reinterpret_cast<nvmlDevice_t>(&s.gpus[i]) == device) return &s.gpus[i];
  }
  return nullptr;
}

int index_of(const Gpu* gpu) { return static_cast<int>(gpu - state().gpus); }

// The common prologue of a per-GPU call: initialised, a valid handle, not scripted to fail.
nvmlReturn_t enter(nvmlDevice_t device, const char* call, Gpu*& gpu) {
  if (state().init_count == 0) return kUninitialized;
  gpu = gpu_of(device);
  if (gpu == nullptr) return kInvalidArgument;
  return scripted_failure(gpu->failures, call);
}

nvmlReturn_t next_value(Gpu& gpu, const char* series_name, unsigned long long& value) {
  auto it = gpu.series.find(series_name);
  if (it == gpu.series.end()) return kNotSupported;
  Series& series = it->second;
  value = series.values[std::min(series.next, series.values.size() - 1)];
  ++series.next;
  return kSuccess;
}

template <typename T>
nvmlReturn_t read_series(nvmlDevice_t device, const char* call, const char* series_name, T* out) {
  const std::lock_guard<std::mutex> lock(state().mutex);
  Gpu* gpu = nullptr;
  if (const nvmlReturn_t code = enter(device, call, gpu); code != kSuccess) return code;
  if (out == nullptr) return kInvalidArgument;
  unsigned long long value = 0;
  if (const nvmlReturn_t code = next_value(*gpu, series_name, value); code != kSuccess) {
    return code;
  }
  *out = static_cast<T>(value);
  return kSuccess;
}

nvmlReturn_t copy_text(const std::string& text, char* buffer, unsigned int length) {
  if (buffer == nullptr) return kInvalidArgument;
  if (text.size() + 1 > length) return kInsufficientSize;
  std::memcpy(buffer, text.c_str(), text.size() + 1);
  return kSuccess;
}

nvmlReturn_t copy_list(const std::vector<unsigned int>& list, unsigned int* count,
                       unsigned int* out) {
  if (count == nullptr) return kInvalidArgument;
  if (*count < list.size() || out == nullptr) {
    *count = static_cast<unsigned int>(list.size());
    return kInsufficientSize;
  }
  std::copy(list.begin(), list.end(), out);
  *count = static_cast<unsigned int>(list.size());
  return kSuccess;
}

}  // namespace

extern "C" {

nvmlReturn_t nvmlInit_v2() {
  State& s = state();
  const std::lock_guard<std::mutex> lock(s.mutex);
  if (!s.initialised_once) {
    s.initialised_once = true;
    s.first_init = std::chrono::steady_clock::now();
  }
  if (s.init_count == 0) {
    std::string error;
    if (!read_script(s, error)) {
      std::fprintf(stderr, "fake_nvml: %s\n", error.c_str());
      return kUnknown;
    }
    if (const nvmlReturn_t code = scripted_failure(s.global_failures, "init"); code != kSuccess) {
      return code;
    }
  }
  ++s.init_count;
  log_line("init");
  return kSuccess;
}

nvmlReturn_t nvmlShutdown() {
  State& s = state();
  const std::lock_guard<std::mutex> lock(s.mutex);
  if (s.init_count == 0) return kUninitialized;
  --s.init_count;
  log_line("shutdown");
  return kSuccess;
}

const char* nvmlErrorString(nvmlReturn_t code) {
  switch (code) {
    case 0:
      return "Success";
    case 1:
      return "Uninitialized";
    case 2:
      return "Invalid Argument";
    case 3:
      return "Not Supported";
    case 4:
      return "Insufficient Permissions";
    case 6:
      return "Not Found";
    case 7:
      return "Insufficient Size";
    case 9:
      return "Driver Not Loaded";
    case 15:
      return "GPU is lost";
    default:
      return "Unknown Error";
  }
}

nvmlReturn_t nvmlSystemGetDriverVersion(char* version, unsigned int length) {
  State& s = state();
  const std::lock_guard<std::mutex> lock(s.mutex);
  if (s.init_count == 0) return kUninitialized;
  if (const nvmlReturn_t code = scripted_failure(s.global_failures, "driver"); code != kSuccess) {
    return code;
  }
  return copy_text(s.driver, version, length);
}

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int* count) {
  State& s = state();
  const std::lock_guard<std::mutex> lock(s.mutex);
  if (s.init_count == 0) return kUninitialized;
  if (const nvmlReturn_t code = scripted_failure(s.global_failures, "count"); code != kSuccess) {
    return code;
  }
  if (count == nullptr) return kInvalidArgument;
  *count = static_cast<unsigned int>(s.gpu_count);
  return kSuccess;
}

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t* device) {
  State& s = state();
  const std::lock_guard<std::mutex> lock(s.mutex);
  if (s.init_count == 0) return kUninitialized;
  if (device == nullptr || index >= static_cast<unsigned int>(s.gpu_count)) {
    return kInvalidArgument;
  }
  if (const nvmlReturn_t code = scripted_failure(s.gpus[index].failures, "handle");
      code != kSuccess) {
    return code;
  }
  *device = reinterpret_cast<nvmlDevice_t>(&s.gpus[index]);
  return kSuccess;
}

nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char* name, unsigned int length) {
  const std::lock_guard<std::mutex> lock(state().mutex);
  Gpu* gpu = nullptr;
  if (const nvmlReturn_t code = enter(device, "name", gpu); code != kSuccess) return code;
  return copy_text(gpu->name, name, length);
}

nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char* uuid, unsigned int length) {
  const std::lock_guard<std::mutex> lock(state().mutex);
  Gpu* gpu = nullptr;
  if (const nvmlReturn_t code = enter(device, "uuid", gpu); code != kSuccess) return code;
  return copy_text(gpu->uuid, uuid, length);
}

nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t device, unsigned int* power) {
  return read_series(device, "power", "power_mw", power);
}

nvmlReturn_t nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t device, unsigned long long* energy) {
  State& s = state();
  const std::lock_guard<std::mutex> lock(s.mutex);
  Gpu* gpu = nullptr;
  if (const nvmlReturn_t code = enter(device, "energy", gpu); code != kSuccess) return code;
  if (energy == nullptr) return kInvalidArgument;
  if (gpu->energy_rate_mw != 0) {
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - s.first_init).count();
    *energy = static_cast<unsigned long long>(static_cast<double>(gpu->energy_rate_mw) * seconds);
    return kSuccess;
  }
  return next_value(*gpu, "energy_mj", *energy);
}

namespace {

nvmlReturn_t compute_processes(nvmlDevice_t device, unsigned int* count, nvmlProcessInfo_t* infos) {
  const std::lock_guard<std::mutex> lock(state().mutex);
  Gpu* gpu = nullptr;
  if (const nvmlReturn_t code = enter(device, "processes", gpu); code != kSuccess) return code;
  if (!gpu->has_processes) return kNotSupported;
  if (count == nullptr) return kInvalidArgument;
  if (*count < gpu->processes.size() || infos == nullptr) {
    *count = static_cast<unsigned int>(gpu->processes.size());
    return kInsufficientSize;
  }
  for (std::size_t i = 0; i < gpu->processes.size(); ++i) {
    infos[i] = nvmlProcessInfo_t{gpu->processes[i], 0, 0xFFFFFFFFu, 0xFFFFFFFFu};
  }
  *count = static_cast<unsigned int>(gpu->processes.size());
  return kSuccess;
}

}  // namespace

nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t device, unsigned int* count,
                                                     nvmlProcessInfo_t* infos) {
  return compute_processes(device, count, infos);
}

nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v2(nvmlDevice_t device, unsigned int* count,
                                                     nvmlProcessInfo_t* infos) {
  return compute_processes(device, count, infos);
}

nvmlReturn_t nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t device, unsigned int* limit) {
  return read_series(device, "power_limit", "power_limit_mw", limit);
}

nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t device, int sensor, unsigned int* temperature) {
  if (sensor != 0) return kInvalidArgument;
  return read_series(device, "temperature", "temperature_c", temperature);
}

nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t device, int type, unsigned int* clock) {
  switch (type) {
    case kClockGraphics:
      return read_series(device, "clock", "clock_graphics_mhz", clock);
    case kClockSm:
      return read_series(device, "clock", "clock_sm_mhz", clock);
    case kClockMemory:
      return read_series(device, "clock", "clock_mem_mhz", clock);
    default:
      return kInvalidArgument;
  }
}

#ifndef NNERGY_FAKE_NVML_OLD_DRIVER
nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t device,
                                                    unsigned long long* reasons) {
  return read_series(device, "reasons", "reasons", reasons);
}
#endif

nvmlReturn_t nvmlDeviceGetCurrentClocksThrottleReasons(nvmlDevice_t device,
                                                       unsigned long long* reasons) {
  return read_series(device, "reasons", "reasons", reasons);
}

nvmlReturn_t nvmlDeviceGetFieldValues(nvmlDevice_t device, int count, nvmlFieldValue_t* values) {
  const std::lock_guard<std::mutex> lock(state().mutex);
  Gpu* gpu = nullptr;
  if (const nvmlReturn_t code = enter(device, "instant_power", gpu); code != kSuccess) {
    return code;
  }
  if (values == nullptr || count < 0) return kInvalidArgument;
  for (int i = 0; i < count; ++i) {
    nvmlFieldValue_t& field = values[i];
    field.timestamp = 0;
    field.latencyUsec = 0;
    // Like real drivers: the call succeeds and an unknown field carries its own error.
    unsigned long long value = 0;
    field.nvmlReturn =
        field.fieldId == kFieldPowerInstant ? next_value(*gpu, "instant_mw", value) : kNotSupported;
    if (field.nvmlReturn == kSuccess) {
      field.valueType = kValueUnsignedInt;
      field.value.uiVal = static_cast<unsigned int>(value);
    }
  }
  return kSuccess;
}

nvmlReturn_t nvmlDeviceGetSupportedMemoryClocks(nvmlDevice_t device, unsigned int* count,
                                                unsigned int* clocks) {
  const std::lock_guard<std::mutex> lock(state().mutex);
  Gpu* gpu = nullptr;
  if (const nvmlReturn_t code = enter(device, "supported_clocks", gpu); code != kSuccess) {
    return code;
  }
  if (gpu->memory_clocks.empty()) return kNotSupported;
  return copy_list(gpu->memory_clocks, count, clocks);
}

nvmlReturn_t nvmlDeviceGetSupportedGraphicsClocks(nvmlDevice_t device, unsigned int memory_mhz,
                                                  unsigned int* count, unsigned int* clocks) {
  const std::lock_guard<std::mutex> lock(state().mutex);
  Gpu* gpu = nullptr;
  if (const nvmlReturn_t code = enter(device, "supported_clocks", gpu); code != kSuccess) {
    return code;
  }
  auto it = gpu->graphics_clocks.find(memory_mhz);
  if (it == gpu->graphics_clocks.end()) return kNotFound;
  return copy_list(it->second, count, clocks);
}

nvmlReturn_t nvmlDeviceSetGpuLockedClocks(nvmlDevice_t device, unsigned int min_mhz,
                                          unsigned int max_mhz) {
  const std::lock_guard<std::mutex> lock(state().mutex);
  Gpu* gpu = nullptr;
  if (const nvmlReturn_t code = enter(device, "lock_clocks", gpu); code != kSuccess) return code;
  if (min_mhz > max_mhz) return kInvalidArgument;
  log_line("lock_clocks " + std::to_string(index_of(gpu)) + " " + std::to_string(min_mhz) + " " +
           std::to_string(max_mhz));
  return kSuccess;
}

nvmlReturn_t nvmlDeviceResetGpuLockedClocks(nvmlDevice_t device) {
  const std::lock_guard<std::mutex> lock(state().mutex);
  Gpu* gpu = nullptr;
  if (const nvmlReturn_t code = enter(device, "reset_clocks", gpu); code != kSuccess) return code;
  log_line("reset_clocks " + std::to_string(index_of(gpu)));
  return kSuccess;
}

}  // extern "C"
