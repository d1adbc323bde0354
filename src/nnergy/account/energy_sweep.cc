#include "nnergy/account/energy_sweep.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <unordered_map>

#include "nnergy/core/error.h"
#include "nnergy/core/huge_pages.h"

namespace nnergy::account {
namespace {

struct Series {
  std::vector<double> time_s;
  std::vector<double> power_w;
};

// Value of a series at t inside its range: the most recent sample (recency) or the line between
// neighbours. `cursor` only moves forward, so a merge over increasing t is linear.
double value_at(const Series& series, double t, bool interpolate, std::size_t& cursor) {
  while (cursor + 1 < series.time_s.size() && series.time_s[cursor + 1] <= t) ++cursor;
  if (!interpolate || cursor + 1 >= series.time_s.size()) return series.power_w[cursor];
  const double t0 = series.time_s[cursor];
  const double t1 = series.time_s[cursor + 1];
  const double p0 = series.power_w[cursor];
  const double p1 = series.power_w[cursor + 1];
  return p0 + (p1 - p0) * (t - t0) / (t1 - t0);
}

// A start or end of an event, 16 bytes (two per event, so they count in memory per event).
struct Boundary {
  double time_s;
  std::uint32_t local;  ///< index into the device's event list
  /// Order among boundaries at the same time, the top bit set for a start: ends before starts
  /// (intervals are half-open); outer starts first (rank), inner ends first (2^31 - 1 - rank).
  std::uint32_t order;

  static constexpr std::uint32_t kStartBit = std::uint32_t{1} << 31;
  static Boundary start_of(double time_s, std::uint32_t local, std::uint32_t rank) {
    return {time_s, local, kStartBit | rank};
  }
  static Boundary end_of(double time_s, std::uint32_t local, std::uint32_t rank) {
    return {time_s, local, (kStartBit - 1) - rank};
  }
  bool start() const { return (order & kStartBit) != 0; }
};

class DeviceSweep {
 public:
  DeviceSweep(const PowerTimeline* timeline, bool interpolate, DeviceAccount& account)
      : timeline_(timeline), interpolate_(interpolate), account_(account) {}

  // Integrates power from now_ to t with the current number of busy threads.
  void advance(double t) {
    while (now_ < t) {
      double next = t;
      bool measured = false;
      double energy_j = 0;
      if (timeline_ != nullptr && now_ >= timeline_->time_s.front() &&
          now_ < timeline_->time_s.back()) {
        const auto& times = timeline_->time_s;
        while (times[cursor_ + 1] <= now_) ++cursor_;
        next = std::min(t, times[cursor_ + 1]);
        measured = true;
        energy_j = piece_energy(now_, next);
      } else if (timeline_ != nullptr && now_ < timeline_->time_s.front()) {
        next = std::min(t, timeline_->time_s.front());
      }
      const double dt = next - now_;
      if (measured) {
        if (busy_threads_ > 0) {
          // Multiplicity: every busy thread's innermost event gets an equal share.
          share_j_ += energy_j / busy_threads_;
          account_.attributed_energy_j += energy_j;
          account_.busy_time_s += dt;
        } else {
          account_.idle_energy_j += energy_j;
          account_.idle_time_s += dt;
        }
      } else {
        unmeasured_s_ += dt;
        if (busy_threads_ > 0) account_.unmeasured_busy_time_s += dt;
      }
      now_ = next;
    }
  }

  // Where an event's open segment (the time it is innermost on its thread) starts.
  struct Mark {
    double share_j;
    double unmeasured_s;
    double time_s;
  };
  Mark open() const { return {share_j_, unmeasured_s_, now_}; }

  // Ends the segment opened at `mark`, adding its share to `energy`.
  void close(EventEnergy& energy, const Mark& mark) const {
    energy.energy_j += share_j_ - mark.share_j;
    energy.unmeasured_time_s += unmeasured_s_ - mark.unmeasured_s;
    energy.exclusive_time_s += now_ - mark.time_s;
  }

  void set_now(double t) { now_ = t; }
  void thread_busy() { ++busy_threads_; }
  void thread_idle() { --busy_threads_; }

 private:
  double piece_energy(double a, double b) const {
    const double p0 = timeline_->power_w[cursor_];
    if (!interpolate_) return p0 * (b - a);
    const double t0 = timeline_->time_s[cursor_];
    const double t1 = timeline_->time_s[cursor_ + 1];
    const double slope = (timeline_->power_w[cursor_ + 1] - p0) / (t1 - t0);
    const double pa = p0 + slope * (a - t0);
    const double pb = p0 + slope * (b - t0);
    return 0.5 * (pa + pb) * (b - a);  // exact for a linear piece
  }

  const PowerTimeline* timeline_;
  bool interpolate_;
  DeviceAccount& account_;
  double now_ = 0;
  std::size_t cursor_ = 0;
  std::size_t busy_threads_ = 0;
  double share_j_ = 0;       // ∫ power / busy threads over measured busy time, J
  double unmeasured_s_ = 0;  // unmeasured wall time so far, s
};

void sweep_device(const std::vector<TraceEvent>& events, const std::vector<std::uint32_t>& indices,
                  const PowerTimeline* timeline, const SweepOptions& options,
                  DeviceAccount& account, std::vector<EventEnergy>& energies) {
  const std::size_t n = indices.size();
  // Dense per-device thread numbers, for per-thread stacks in a vector. try_emplace, unlike
  // emplace, allocates no node for a thread already numbered (that is, for almost every event).
  std::unordered_map<std::uint64_t, std::uint32_t> thread_number;
  std::vector<std::uint32_t> thread_of(n);
  for (std::size_t k = 0; k < n; ++k) {
    const auto [it, inserted] = thread_number.try_emplace(
        events[indices[k]].thread, static_cast<std::uint32_t>(thread_number.size()));
    thread_of[k] = it->second;
  }
  // Rank: outer events before inner ones that start at the same time. The keys are copied into
  // one compact array so that the sort does not chase indices into the event list.
  struct RankKey {
    double start_s;
    double duration_s;
    std::uint32_t local;
  };
  std::vector<RankKey> keys(n);
  for (std::uint32_t k = 0; k < n; ++k) {
    keys[k] = {events[indices[k]].start_s, events[indices[k]].duration_s, k};
  }
  std::sort(keys.begin(), keys.end(), [](const RankKey& a, const RankKey& b) {
    if (a.start_s != b.start_s) return a.start_s < b.start_s;
    if (a.duration_s != b.duration_s) return a.duration_s > b.duration_s;
    return a.local < b.local;
  });
  std::vector<Boundary> boundaries;
  boundaries.reserve(2 * n);
  advise_huge_pages(boundaries.data(), boundaries.capacity() * sizeof(Boundary));
  double window_start = std::numeric_limits<double>::infinity();
  double window_end = -std::numeric_limits<double>::infinity();
  for (std::uint32_t rank = 0; rank < n; ++rank) {
    const RankKey& key = keys[rank];
    window_start = std::min(window_start, key.start_s);
    window_end = std::max(window_end, key.start_s + key.duration_s);
    // A zero-length event has no time to receive energy.
    if (!(key.duration_s > 0)) continue;
    boundaries.push_back(Boundary::start_of(key.start_s, key.local, rank));
    boundaries.push_back(Boundary::end_of(key.start_s + key.duration_s, key.local, rank));
  }
  keys = {};
  // Same time: ends before starts (intervals are half-open); outer starts first, inner ends first.
  std::sort(boundaries.begin(), boundaries.end(), [](const Boundary& a, const Boundary& b) {
    if (a.time_s != b.time_s) return a.time_s < b.time_s;
    return a.order < b.order;
  });
  account.event_count = n;
  if (n > 0) {
    account.window_start_s = window_start;
    account.window_end_s = window_end;
  }
  if (boundaries.empty()) return;

  DeviceSweep sweep(timeline, options.interpolate, account);
  sweep.set_now(boundaries.front().time_s);
  // Per thread, the open events, innermost last, each with where its open segment started (only
  // the innermost has one running; an outer one's restarts when it is innermost again).
  struct Open {
    std::uint32_t local;
    DeviceSweep::Mark mark;
  };
  std::vector<std::vector<Open>> stacks(thread_number.size());
  for (const Boundary& boundary : boundaries) {
    sweep.advance(boundary.time_s);
    std::vector<Open>& stack = stacks[thread_of[boundary.local]];
    if (boundary.start()) {
      if (stack.empty()) {
        sweep.thread_busy();
      } else {
        sweep.close(energies[indices[stack.back().local]], stack.back().mark);
      }
      stack.push_back({boundary.local, sweep.open()});
    } else if (!stack.empty() && stack.back().local == boundary.local) {
      sweep.close(energies[indices[boundary.local]], stack.back().mark);
      stack.pop_back();
      if (stack.empty()) {
        sweep.thread_idle();
      } else {
        stack.back().mark = sweep.open();
      }
    } else {
      // Not innermost (the events did not nest): it had no open segment; just forget it.
      const auto found = std::find_if(stack.begin(), stack.end(),
                                      [&](const Open& o) { return o.local == boundary.local; });
      if (found != stack.end()) stack.erase(found);
    }
  }
  account.measured_energy_j = account.attributed_energy_j + account.idle_energy_j;
}

}  // namespace

PowerTimeline combine_power_traces(const std::string& device,
                                   const std::vector<const measure::PowerTrace*>& traces,
                                   double base_epoch_s, bool interpolate) {
  PowerTimeline timeline;
  timeline.device = device;
  std::vector<Series> series;
  double first = -std::numeric_limits<double>::infinity();
  double last = std::numeric_limits<double>::infinity();
  for (const measure::PowerTrace* trace : traces) {
    timeline.source_ids.push_back(trace->info.id);
    Series s;
    for (const measure::PowerSample& sample : trace->samples) {
      if (!sample.power_w) continue;
      const double t = sample.epoch_s - base_epoch_s;
      if (!s.time_s.empty() && t <= s.time_s.back()) continue;
      s.time_s.push_back(t);
      s.power_w.push_back(*sample.power_w);
    }
    if (s.time_s.empty()) {
      throw InvalidInput("power source '" + trace->info.id + "' (device " + device +
                         "): expected samples with power_w, found none (an empty power trace)");
    }
    first = std::max(first, s.time_s.front());
    last = std::min(last, s.time_s.back());
    series.push_back(std::move(s));
  }
  if (series.size() == 1) {
    timeline.time_s = std::move(series[0].time_s);
    timeline.power_w = std::move(series[0].power_w);
    return timeline;
  }
  if (!(first <= last)) {
    throw InvalidInput("power traces of device " + device + " (" +
                       join_with_commas(timeline.source_ids) +
                       "): expected them to overlap in time to be summed, found disjoint ranges");
  }
  std::vector<double> times;
  for (const Series& s : series) {
    for (double t : s.time_s) {
      if (t >= first && t <= last) times.push_back(t);
    }
  }
  std::sort(times.begin(), times.end());
  times.erase(std::unique(times.begin(), times.end()), times.end());
  std::vector<std::size_t> cursors(series.size(), 0);
  for (double t : times) {
    double sum_w = 0;
    for (std::size_t k = 0; k < series.size(); ++k) {
      sum_w += value_at(series[k], t, interpolate, cursors[k]);
    }
    timeline.time_s.push_back(t);
    timeline.power_w.push_back(sum_w);
  }
  return timeline;
}

PowerTimeline decimate(const PowerTimeline& timeline, std::size_t factor) {
  if (factor == 0) throw InvalidInput("decimation factor: expected >= 1, found 0");
  PowerTimeline result;
  result.device = timeline.device;
  result.source_ids = timeline.source_ids;
  const std::size_t n = timeline.time_s.size();
  for (std::size_t i = 0; i < n; i += factor) {
    result.time_s.push_back(timeline.time_s[i]);
    result.power_w.push_back(timeline.power_w[i]);
  }
  if (n > 0 && (n - 1) % factor != 0) {
    result.time_s.push_back(timeline.time_s[n - 1]);
    result.power_w.push_back(timeline.power_w[n - 1]);
  }
  return result;
}

Accounting account_energy(const std::vector<TraceEvent>& events,
                          const std::vector<PowerTimeline>& power, const SweepOptions& options) {
  if (events.size() >= std::numeric_limits<std::uint32_t>::max() / 2) {
    throw InvalidInput("program trace: expected fewer than 2^31 events, found " +
                       std::to_string(events.size()));
  }
  Accounting result;
  result.events.resize(events.size());
  std::map<std::string, std::vector<std::uint32_t>> by_device;
  // Runs of events share a device: look the device up only where it changes.
  std::vector<std::uint32_t>* indices_of_device = nullptr;
  for (std::uint32_t i = 0; i < events.size(); ++i) {
    if (i == 0 || events[i].device != events[i - 1].device)
      indices_of_device = &by_device[std::string(events[i].device)];
    indices_of_device->push_back(i);
  }
  for (const auto& [device, indices] : by_device) {
    DeviceAccount account;
    account.device = device;
    const PowerTimeline* timeline = nullptr;
    for (const PowerTimeline& candidate : power) {
      if (candidate.device == device && !candidate.time_s.empty()) timeline = &candidate;
    }
    if (timeline != nullptr) {
      account.has_power = true;
      account.source_ids = timeline->source_ids;
    }
    sweep_device(events, indices, timeline, options, account, result.events);
    result.devices.push_back(std::move(account));
  }
  return result;
}

}  // namespace nnergy::account
