#pragma once

#include <memory>
#include <optional>

#include "nnergy/measure/nvml_library.h"
#include "nnergy/measure/power_source.h"

namespace nnergy::measure {

/// One NVIDIA GPU read through NVML. SourceInfo: id "nvml:<index>", kind "gpu", the GPU's name
/// and UUID, the driver version and the enforced power limit (W).
///
/// Power is NVML's instantaneous field (NVML_FI_DEV_POWER_INSTANT) where the driver has it, else
/// nvmlDeviceGetPowerUsage, which Ampere and newer average over about 1 s
/// (SourceInfo::power_is_averaged says which). The energy counter (Volta and newer) is reported
/// cumulatively and never decreases: should the counter go backwards (a driver reload or a reset),
/// counting continues from the last value.
///
/// Not thread-safe across concurrent `read` calls (one sampler thread reads it); separate
/// instances share nothing but the thread-safe NvmlLibrary.
class NvmlSource final : public PowerSource {
 public:
  /// Opens GPU `index` and probes once which optional readings it has (instant power, energy
  /// counter, clocks, temperature, clock-event reasons, power limit). Throws InvalidInput when
  /// there is no GPU `index` and DeviceError when an NVML call fails.
  NvmlSource(std::shared_ptr<NvmlLibrary> library, unsigned int index);

  const SourceInfo& info() const override { return info_; }
  /// Power (W), energy (J), SM and memory clocks (MHz), temperature (°C) and clock-event reasons
  /// now; `time_s` becomes PowerSample::time_s. Throws DeviceError when a reading the GPU
  /// supports fails, e.g. NVML_ERROR_GPU_IS_LOST when it fell off the bus.
  PowerSample read(double time_s) override;

 private:
  std::shared_ptr<NvmlLibrary> library_;
  NvmlGpu gpu_;
  SourceInfo info_;
  bool has_sm_clock_ = false;
  bool has_memory_clock_ = false;
  bool has_temperature_ = false;
  bool has_clock_event_reasons_ = false;
  std::optional<double> last_counter_j_;  ///< the counter as last read
  double counter_offset_j_ = 0;           ///< energy before the counter last went backwards
};

}  // namespace nnergy::measure
