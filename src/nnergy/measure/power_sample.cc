#include "nnergy/measure/power_sample.h"

#include <fmt/format.h>

namespace nnergy::measure {

namespace {

// NVML clock-event reason bits (nvmlClocksEventReason*, formerly nvmlClocksThrottleReason*).
struct ReasonBit {
  std::uint64_t bit;
  const char* name;
  bool throttling;
};
constexpr ReasonBit kReasons[] = {
    {0x1, "gpu_idle", false},
    {0x2, "applications_clocks_setting", false},
    {0x4, "sw_power_cap", true},
    {0x8, "hw_slowdown", true},
    {0x10, "sync_boost", true},
    {0x20, "sw_thermal_slowdown", true},
    {0x40, "hw_thermal_slowdown", true},
    {0x80, "hw_power_brake_slowdown", true},
    {0x100, "display_clock_setting", true},
};

}  // namespace

std::vector<std::string> throttle_reason_names(std::uint64_t reasons) {
  std::vector<std::string> names;
  std::uint64_t known = 0;
  for (const ReasonBit& r : kReasons) {
    known |= r.bit;
    if ((reasons & r.bit) != 0) names.emplace_back(r.name);
  }
  if ((reasons & ~known) != 0) names.push_back(fmt::format("{:#x}", reasons & ~known));
  return names;
}

bool is_throttling(std::uint64_t reasons) {
  for (const ReasonBit& r : kReasons) {
    if (r.throttling && (reasons & r.bit) != 0) return true;
  }
  std::uint64_t known = 0;
  for (const ReasonBit& r : kReasons) known |= r.bit;
  return (reasons & ~known) != 0;
}

}  // namespace nnergy::measure
