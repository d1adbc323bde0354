#pragma once

// Board power of a kernel running steadily, from its activity: the idle board, a share of the
// way to the power limit that any running kernel adds (clocks and voltage up), and shares for
// the tensor units' and DRAM's activity. Above the limit the GPU lowers its clocks until the
// power meets it; kernel models stretch their compute time by power_limit_clock_ratio.

#include <algorithm>

#include "nnergy/device/device_spec.h"
#include "nnergy/kernel/kernel_parameters.h"

namespace nnergy::kernel {

/// What a kernel keeps busy, as fractions of its run time.
struct Activity {
  double compute = 0;        ///< u_c: share of the time its units run their main loop
  double memory = 0;         ///< u_m: achieved DRAM bandwidth / datasheet bandwidth
  double format_weight = 1;  ///< energy per issued slot of its format relative to 16-bit
};

/// P = P_idle + (P_limit − P_idle)·(base·c + compute·u_c·w·c + memory·u_m), W, with
/// c = v²·f/f_boost the clocked share at `clock_mhz` (device::DeviceSpec::relative_voltage);
/// not capped (it may exceed the limit).
double unconstrained_power_w(const device::DeviceSpec& device, const PowerParameters& p,
                             const Activity& activity, double clock_mhz);

/// The tensor units' share of unconstrained_power_w (range·compute·u_c·w·c), W.
double compute_power_w(const device::DeviceSpec& device, const PowerParameters& p,
                       const Activity& activity, double clock_mhz);

/// Board power of a kernel whose activity is given as measured (its clock drops at the limit,
/// which the activity already reflects): unconstrained_power_w at the boost clock, at most the
/// power limit, W.
double measured_activity_power_w(const device::DeviceSpec& device, const PowerParameters& p,
                                 const Activity& activity);

/// The clock ratio (≤ 1) at which the clocked part of `unconstrained_w` fits under the power
/// limit: ((limit − idle − memory part)/(unconstrained − idle − memory part))^(1/κ); 1 when
/// the kernel is under the limit.
double power_limit_clock_ratio(const device::DeviceSpec& device, const PowerParameters& p,
                               const Activity& activity, double unconstrained_w);

/// The clock a kernel runs at and its board power there.
struct PoweredClock {
  double clock_mhz = 0;        ///< the requested clock, lower when the power limit binds
  double power_w = 0;          ///< board power, between idle and the limit
  double compute_power_w = 0;  ///< the tensor units' share of power_w
  bool capped = false;         ///< whether the power limit lowered the clock
};

/// Runs a kernel whose activity at a clock `activity_at(clock_mhz)` gives at `clock_mhz`, or at
/// the clock power_limit_clock_ratio allows when its power there exceeds the limit.
template <typename ActivityAt>
PoweredClock run_under_power_limit(const device::DeviceSpec& device, const PowerParameters& p,
                                   const ActivityAt& activity_at, double clock_mhz) {
  Activity a = activity_at(clock_mhz);
  double power = unconstrained_power_w(device, p, a, clock_mhz);
  PoweredClock out;
  out.clock_mhz = clock_mhz;
  const double ratio = power_limit_clock_ratio(device, p, a, power);
  if (ratio < 1) {
    out.clock_mhz = clock_mhz * ratio;
    out.capped = true;
    a = activity_at(out.clock_mhz);
    power = device.tdp_w;
  }
  out.power_w = std::clamp(power, device.idle_w, device.tdp_w);
  out.compute_power_w =
      std::min(out.power_w - device.idle_w, compute_power_w(device, p, a, out.clock_mhz));
  return out;
}

}  // namespace nnergy::kernel
