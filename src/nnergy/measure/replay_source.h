#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "nnergy/measure/power_source.h"
#include "nnergy/measure/trace_file.h"

namespace nnergy::measure {

/// Plays a recorded PowerTrace on the caller's clock: read(t) returns the last recorded sample at
/// or before (first sample's time + t), re-timed to t. Power, clocks, temperature and throttle
/// reasons are the recorded ones; energy_j is re-based to 0 at the first recorded energy reading.
/// Before the first sample (t < 0) the first sample is returned, after the last one the last.
/// Id "replay:<file>#<recorded id>", kind "replay"; name, uuid, driver, power limit and the
/// has_* flags are the recorded source's. Not thread-safe; instances share no state.
class ReplaySource final : public PowerSource {
 public:
  /// `file_label` names the recording in the id. Throws InvalidInput for a trace without
  /// samples.
  ReplaySource(PowerTrace trace, const std::string& file_label);

  const SourceInfo& info() const override { return info_; }
  /// Never throws. O(log n) in the trace's length.
  PowerSample read(double time_s) override;

  /// Recorded time from the first to the last sample, s.
  double duration_s() const;

 private:
  SourceInfo info_;
  std::vector<PowerSample> samples_;
  std::optional<double> energy_origin_j_;
};

/// `open_replay_sources` that also returns the reader's warnings (dropped rows) in `warnings`
/// (may be null).
Detection open_replay_sources(const std::string& path, TraceWarnings* warnings);

}  // namespace nnergy::measure
