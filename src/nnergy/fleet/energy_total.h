#pragma once

#include <optional>

#include "nnergy/measure/power_sample.h"

namespace nnergy::fleet {

/// A source's cumulative energy as a Prometheus counter, J: never decreases within a process.
///
/// From the source's own energy counter where the samples carry one (NVML's total energy, RAPL),
/// continuing from the last value should the counter go backwards (a driver reload, a reset);
/// else the trapezoidal integral of power over the samples' times, from 0 at the first sample.
/// Not thread-safe: the caller serialises `add` and `joules`.
class EnergyTotal {
 public:
  /// Takes the next sample of the source (in time order).
  void add(const measure::PowerSample& sample);
  /// The total so far, J; nullopt before a sample with energy or power.
  std::optional<double> joules() const { return total_j_; }

 private:
  std::optional<double> total_j_;
  std::optional<double> last_counter_j_;  ///< the source's counter at the previous sample
  std::optional<double> last_power_w_;
  double last_time_s_ = 0;
};

}  // namespace nnergy::fleet
