#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "nnergy/measure/power_source.h"

namespace nnergy::measure {

/// The powercap tree RAPL zones are read from: `$NNERGY_POWERCAP_ROOT` when set and non-empty,
/// else /sys/class/powercap. Reads the environment; call from one thread at a time.
std::filesystem::path powercap_root();

/// RAPL zones under `root`, as `open_rapl_sources` does for `powercap_root()`: argument "" opens
/// every zone, a zone name ("package-0", "package-0/dram") or directory name ("intel-rapl:0:1")
/// opens one. A missing tree and unreadable counters are reported in `Detection::unavailable`;
/// an unknown zone throws InvalidInput listing the zones present.
Detection open_rapl_sources_at(const std::filesystem::path& root, const std::string& argument);

/// Why reading a powercap file failed, for an Unavailable report: EACCES and EPERM become
/// "permission denied reading FILE (root-only since Linux 5.10)", any other errno
/// "cannot read FILE: <strerror>". Thread-safe.
std::string describe_powercap_read_error(const std::filesystem::path& file, int error_number);

/// One RAPL energy counter: a Linux powercap zone such as intel-rapl:0 (a CPU package) or
/// intel-rapl:0:1 (its DRAM). Its energy_j is the zone's energy_uj counter in J with wraparound
/// undone; power_w is the energy difference over the time difference of two consecutive reads,
/// absent on the first read. Not thread-safe: one sampler thread reads it.
class RaplSource final : public PowerSource {
 public:
  /// `zone_dir` holds the zone's energy_uj; `max_energy_range_uj` is the zone's
  /// max_energy_range_uj (µJ), the largest value energy_uj takes before it wraps to 0.
  RaplSource(std::filesystem::path zone_dir, SourceInfo info, std::uint64_t max_energy_range_uj);

  const SourceInfo& info() const override { return info_; }
  /// Reads energy_uj. Throws DeviceError naming the file when it can no longer be read.
  PowerSample read(double time_s) override;

 private:
  std::filesystem::path energy_file_;
  SourceInfo info_;
  std::uint64_t range_uj_;
  std::optional<std::uint64_t> previous_uj_;  ///< raw counter at the previous read
  double previous_time_s_ = 0;
  std::uint64_t unwrapped_uj_ = 0;  ///< first raw value plus every delta since, µJ
};

}  // namespace nnergy::measure
