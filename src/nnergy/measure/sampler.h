#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "nnergy/measure/power_source.h"

namespace nnergy::measure {

/// How a Sampler runs.
struct SamplerOptions {
  double period_s = 0.020;  ///< time between two reads of one source
  /// Samples kept in memory per source; older ones are dropped (counted in SourceStatus) so that
  /// long runs have bounded memory. Stream them with `on_sample` to keep everything.
  std::size_t max_samples_in_memory = 1 << 20;
  /// Called from the sampler thread of `source` for every sample, in time order per source
  /// (e.g. to stream a trace file). Must be thread-safe across sources.
  std::function<void(std::size_t source, const PowerSample& sample)> on_sample;
};

/// State of one source's sampling.
struct SourceStatus {
  bool failed = false;  ///< the source threw; its trace ended at the failure
  std::string error;    ///< the failure's message
  std::size_t samples_taken = 0;
  std::size_t samples_dropped = 0;  ///< dropped from memory by the bound (still streamed)
};

/// Samples every source on its own background thread at a fixed period. All timestamps come from
/// one steady clock, as seconds since the sampler's construction; the offset to UNIX time is
/// captured once, so PowerSample::epoch_s = time_s + epoch_offset_s(). Thread-safe.
class Sampler {
 public:
  Sampler(std::vector<std::unique_ptr<PowerSource>> sources, SamplerOptions options);
  ~Sampler();  ///< stops the threads
  Sampler(const Sampler&) = delete;
  Sampler& operator=(const Sampler&) = delete;

  /// Starts the threads (takes a first sample of every source immediately). Idempotent.
  void start();
  /// Takes a last sample of every running source and joins the threads. Idempotent.
  void stop();

  /// Steady time now, seconds since construction.
  double now_s() const;
  /// UNIX time of steady time 0, seconds.
  double epoch_offset_s() const;
  /// Time between two reads of one source, s (SamplerOptions::period_s).
  double period_s() const;

  std::size_t source_count() const;
  const SourceInfo& info(std::size_t source) const;
  SourceStatus status(std::size_t source) const;
  /// A copy of the samples in memory of `source`, in time order.
  std::vector<PowerSample> samples(std::size_t source) const;
  /// Those with from_s <= time_s <= to_s.
  std::vector<PowerSample> samples(std::size_t source, double from_s, double to_s) const;
  /// CPU time the sampler threads have used so far, s (its own overhead).
  double cpu_time_s() const;
  /// Blocks until every source that is still being sampled has a sample with time_s >= `time_s`,
  /// or until `timeout_s` has passed. True when none is missing (also when none is sampling).
  bool wait_for_samples(double time_s, double timeout_s) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// The tick of the next read, scheduled at t0 + k·period_s, after tick `last_tick` was read and
/// the read finished `elapsed_s` after t0: the first tick still in the future, so that a slow read
/// skips the ticks it missed instead of reading them in a burst, and the schedule never drifts.
/// Pure function.
std::int64_t next_tick(std::int64_t last_tick, double elapsed_s, double period_s);

}  // namespace nnergy::measure
