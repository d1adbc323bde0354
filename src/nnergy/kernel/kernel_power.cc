#include "nnergy/kernel/kernel_power.h"

#include <algorithm>
#include <cmath>

namespace nnergy::kernel {

namespace {

double memory_part_w(const device::DeviceSpec& device, const PowerParameters& p,
                     const Activity& a) {
  return (device.tdp_w - device.idle_w) * p.memory * a.memory;
}

double clocked_share(const device::DeviceSpec& device, double clock_mhz) {
  const double v = device.relative_voltage(clock_mhz);
  return v * v * clock_mhz / device.clock.boost_mhz;
}

}  // namespace

double unconstrained_power_w(const device::DeviceSpec& device, const PowerParameters& p,
                             const Activity& a, double clock_mhz) {
  const double range = device.tdp_w - device.idle_w;
  return device.idle_w + range * p.base * clocked_share(device, clock_mhz) +
         compute_power_w(device, p, a, clock_mhz) + memory_part_w(device, p, a);
}

double compute_power_w(const device::DeviceSpec& device, const PowerParameters& p,
                       const Activity& a, double clock_mhz) {
  return (device.tdp_w - device.idle_w) * p.compute * a.compute * a.format_weight *
         clocked_share(device, clock_mhz);
}

double measured_activity_power_w(const device::DeviceSpec& device, const PowerParameters& p,
                                 const Activity& activity) {
  return std::min(device.tdp_w, unconstrained_power_w(device, p, activity, device.clock.boost_mhz));
}

double power_limit_clock_ratio(const device::DeviceSpec& device, const PowerParameters& p,
                               const Activity& a, double unconstrained_w) {
  if (unconstrained_w <= device.tdp_w) return 1;
  const double fixed = device.idle_w + memory_part_w(device, p, a);
  const double room = device.tdp_w - fixed;
  const double clocked = unconstrained_w - fixed;
  if (room <= 0 || clocked <= 0) return 1;
  return std::pow(room / clocked, 1 / std::max(p.clock_exponent, 0.5));
}

}  // namespace nnergy::kernel
