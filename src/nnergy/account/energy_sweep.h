#pragma once

#include <string>
#include <vector>

#include "nnergy/account/trace_event.h"
#include "nnergy/measure/trace_file.h"

namespace nnergy::account {

/// The power of one device as a function of time: the sum of the power traces assigned to it.
/// Times are seconds on the accounting time base (the one TraceEvent::start_s uses after
/// alignment). The function is known on [time_s.front(), time_s.back()] and unmeasured outside.
struct PowerTimeline {
  std::string device;                   ///< "cpu" or "gpu:N"
  std::vector<std::string> source_ids;  ///< the power traces summed, e.g. {"rapl:package-0"}
  std::vector<double> time_s;           ///< strictly increasing
  std::vector<double> power_w;          ///< power at time_s[i], W
};

/// Sums `traces` (all of one device) into one timeline on the accounting base: a sample's time is
/// its epoch_s − `base_epoch_s`. Between a trace's samples its power is the most recent sample's
/// (recency), or the line between neighbours when `interpolate`; the sum is known where every
/// trace is. Samples without power_w are skipped. Throws InvalidInput when a trace has no sample
/// with power (naming the source) or the traces do not overlap in time.
PowerTimeline combine_power_traces(const std::string& device,
                                   const std::vector<const measure::PowerTrace*>& traces,
                                   double base_epoch_s, bool interpolate);

/// `timeline` with only every `factor`-th sample kept (first and last always kept): the sparser
/// sampling of ASSS (seed 001 §5.4.1). factor >= 1.
PowerTimeline decimate(const PowerTimeline& timeline, std::size_t factor);

/// How power between samples is taken.
struct SweepOptions {
  /// false: the most recent sample's power (recency, seed 001 §3.2 "Imperfect Alignment" and
  /// Algorithm 1 `Now`); true: linear interpolation between samples.
  bool interpolate = false;
};

/// What one event received.
struct EventEnergy {
  double energy_j = 0;           ///< attributed energy, J
  double exclusive_time_s = 0;   ///< wall time it was the innermost event on its thread, s
  double unmeasured_time_s = 0;  ///< part of the exclusive time with no power known, s
};

/// Conservation per device over its accounting window (first event start to last event end).
struct DeviceAccount {
  std::string device;
  bool has_power = false;  ///< a power timeline was given for the device
  std::vector<std::string> source_ids;
  double window_start_s = 0;  ///< on the accounting base
  double window_end_s = 0;
  double measured_energy_j = 0;       ///< ∫ power over the measured part of the window, J
  double attributed_energy_j = 0;     ///< given to events, J
  double idle_energy_j = 0;           ///< measured while no event ran on the device, J
  double idle_time_s = 0;             ///< measured time with no event running, s
  double busy_time_s = 0;             ///< measured time with at least one event running, s
  double unmeasured_busy_time_s = 0;  ///< time with events running but no power known, s
  std::size_t event_count = 0;
};

/// The result of accounting one trace against its devices' power.
struct Accounting {
  std::vector<EventEnergy> events;     ///< parallel to the input events
  std::vector<DeviceAccount> devices;  ///< one per device with events, sorted by name
};

/// Attributes each device's measured energy to the events on it (seed 001 Algorithm 2, in the
/// optimised form §3.3 describes: durable events are handled by a sweep over the merged
/// boundaries of events and power samples, never by flattening per time unit).
///
/// In each elementary interval, the device's energy (power × duration, recency or interpolated)
/// goes to the innermost active event of every busy thread (or GPU stream) on it, in equal
/// shares (Multiplicity, Algorithm 2 `BuildTEFootprint`: P / |ops|); with no event active it is
/// idle energy. Events must nest per thread (resolve_hierarchy ensures it). A device without a
/// timeline is reported with has_power = false and its events' time as unmeasured.
///
/// Each event's energy is the difference of a running integral of power/busy-thread-count
/// between the moments it becomes and stops being innermost, so the cost is
/// O((events + samples) log(events)) time and O(events + samples) memory.
Accounting account_energy(const std::vector<TraceEvent>& events,
                          const std::vector<PowerTimeline>& power, const SweepOptions& options);

}  // namespace nnergy::account
