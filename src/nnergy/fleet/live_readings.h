#pragma once

#include <cstddef>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "nnergy/fleet/energy_total.h"
#include "nnergy/measure/power_sample.h"

namespace nnergy::fleet {

/// What is known of one power source now, as a scrape shows it.
struct SourceReading {
  measure::SourceInfo info;
  std::optional<measure::PowerSample> latest;  ///< the last sample; nullopt before the first
  std::optional<double> energy_total_j;        ///< EnergyTotal of the samples so far, J
  /// The source failed (an NVML error, a GPU that fell off the bus): its series are absent.
  bool failed = false;
  std::string error;      ///< the failure's message
  std::string slurm_job;  ///< slurm_job_label of the jobs on this GPU; "" when none is known
};

/// The latest reading of every source, written by the sampler threads (Sampler's on_sample) and
/// read by scrapes. Thread-safe; `update` of one source never waits for a scrape to finish
/// building text, only for a copy of the readings.
class LiveReadings {
 public:
  explicit LiveReadings(std::vector<measure::SourceInfo> infos);

  /// Takes source `source`'s next sample (in time order per source).
  void update(std::size_t source, const measure::PowerSample& sample);
  /// Marks source `source` failed with `error`: its series disappear from later scrapes.
  void mark_failed(std::size_t source, const std::string& error);
  /// Sets the slurm_job label value of source `source` ("" for none).
  void set_slurm_job(std::size_t source, const std::string& label);

  std::size_t size() const { return readings_.size(); }
  /// A copy of every reading, in source order.
  std::vector<SourceReading> snapshot() const;

 private:
  mutable std::mutex mutex_;
  std::vector<SourceReading> readings_;
  std::vector<EnergyTotal> totals_;
};

}  // namespace nnergy::fleet
