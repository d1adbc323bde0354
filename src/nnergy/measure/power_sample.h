#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace nnergy::measure {

/// One reading of a power source. Units are SI; vendor units (mW, mJ, µJ) are converted where
/// they are read, once.
struct PowerSample {
  double time_s = 0;   ///< steady (monotonic) clock, seconds since the sampler's epoch
  double epoch_s = 0;  ///< UNIX time of the same instant: time_s + the epoch offset captured once
  std::optional<double> power_w;       ///< power as the source reports it (see SourceInfo)
  std::optional<double> energy_j;      ///< cumulative energy counter, J, wraparound already undone
  std::optional<double> sm_clock_mhz;  ///< core (SM / graphics) clock
  std::optional<double> memory_clock_mhz;  ///< memory clock
  std::optional<double> temperature_c;     ///< device temperature, °C
  std::uint64_t throttle_reasons = 0;      ///< NVML clock-event reason bits; 0 = none active
};

/// What a power source measures.
struct SourceInfo {
  std::string id;    ///< unique in a run: "nvml:0", "rapl:package-0", "synthetic", "replay:run.csv"
  std::string kind;  ///< "gpu", "cpu-package", "cpu-core", "dram", "synthetic", "replay"
  std::string name;  ///< device name, e.g. "NVIDIA H100 80GB HBM3" or "package-0"
  std::string uuid;  ///< GPU UUID where known
  std::string driver_version;
  std::optional<double> power_limit_w;
  bool has_energy_counter = false;  ///< PowerSample::energy_j is filled
  bool has_power = true;            ///< PowerSample::power_w is filled
  /// True when power_w is a moving average (NVML's averaged power, ~1 s on Ampere and newer)
  /// rather than an instantaneous reading.
  bool power_is_averaged = false;
};

/// Names of the NVML clock-event (throttle) reason bits set in `reasons`, e.g.
/// {"sw_power_cap", "hw_thermal_slowdown"}; unknown bits as "0x...".
std::vector<std::string> throttle_reason_names(std::uint64_t reasons);

/// Clock-event reasons that mean the clock was held below what was asked (everything except
/// "gpu_idle" and "applications_clocks_setting").
bool is_throttling(std::uint64_t reasons);

}  // namespace nnergy::measure
