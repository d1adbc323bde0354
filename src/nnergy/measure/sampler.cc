#include "nnergy/measure/sampler.h"

#include <pthread.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <deque>
#include <exception>
#include <limits>
#include <mutex>
#include <string>
#include <thread>
#include <utility>

#include "nnergy/core/error.h"

namespace nnergy::measure {

namespace {

using Clock = std::chrono::steady_clock;
using Seconds = std::chrono::duration<double>;

// start() returns once every source has its first sample; a source whose first read hangs must
// not hang the caller for ever, so the wait is bounded (first NVML reads can take ~100 ms).
constexpr double kFirstSampleWait_s = 5.0;
// Longest wait accepted by wait_for_samples, so that converting it to a time point cannot
// overflow the steady clock's 64-bit nanosecond count (~292 years).
constexpr double kLongestWait_s = 365.0 * 24 * 3600;

double cpu_seconds(clockid_t clock) {
  timespec ts{};
  if (clock_gettime(clock, &ts) != 0) return 0;
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

}  // namespace

std::int64_t next_tick(std::int64_t last_tick, double elapsed_s, double period_s) {
  if (!(period_s > 0) || !std::isfinite(period_s)) {
    throw InvalidInput("next_tick: expected a finite period_s > 0, found " +
                       std::to_string(period_s));
  }
  // The first tick strictly after now; never one already taken, even if the clock read races
  // with a tick boundary.
  const auto due = static_cast<std::int64_t>(std::floor(elapsed_s / period_s)) + 1;
  return std::max(last_tick + 1, due);
}

struct Sampler::Impl {
  /// One source and everything its thread shares with the callers.
  struct Channel {
    std::unique_ptr<PowerSource> source;
    std::thread thread;

    // Guarded by `data_mutex`: what the callers copy.
    mutable std::mutex data_mutex;
    std::deque<PowerSample> samples;
    SourceStatus status;

    // Guarded by Impl::progress_mutex: what wait_for_samples waits on.
    bool active = false;  ///< the thread is sampling (started, not stopped, not failed)
    double latest_s = -std::numeric_limits<double>::infinity();

    // Guarded by Impl::cpu_mutex: the thread's CPU clock, valid only while it runs.
    bool cpu_clock_live = false;
    clockid_t cpu_clock{};
  };

  SamplerOptions options;
  Clock::time_point epoch;
  double epoch_offset_s = 0;
  Clock::duration period{};
  double period_s = 0;  ///< `period` as seconds, so that ticks and their times agree exactly
  std::vector<std::unique_ptr<Channel>> channels;

  std::mutex lifecycle_mutex;  // serializes start() and stop()
  bool running = false;

  std::mutex stop_mutex;
  std::condition_variable stop_cv;
  bool stop_requested = false;

  mutable std::mutex progress_mutex;
  mutable std::condition_variable progress_cv;

  mutable std::mutex cpu_mutex;
  double finished_cpu_s = 0;  ///< CPU time of the threads that have exited

  double since_epoch(Clock::time_point t) const { return Seconds(t - epoch).count(); }

  Channel& channel(std::size_t source) const {
    if (source >= channels.size()) {
      throw InternalError("Sampler: source " + std::to_string(source) + " out of range (" +
                          std::to_string(channels.size()) + " sources)");
    }
    return *channels[source];
  }

  bool all_sampled_since(double time_s) const {
    return std::all_of(channels.begin(), channels.end(),
                       [time_s](const auto& ch) { return !ch->active || ch->latest_s >= time_s; });
  }

  void fail(std::size_t source, std::string message) {
    Channel& ch = *channels[source];
    {
      const std::lock_guard lock(ch.data_mutex);
      ch.status.failed = true;
      ch.status.error = std::move(message);
    }
    {
      const std::lock_guard lock(progress_mutex);
      ch.active = false;
    }
    progress_cv.notify_all();
  }

  // Reads `source` once; false when it failed (and is then marked failed).
  bool take_sample(std::size_t source) {
    Channel& ch = *channels[source];
    // The time handed to read() is the sample's time: synthetic and replay sources compute their
    // reading from it, so the two must be the same number.
    const double t = since_epoch(Clock::now());
    PowerSample sample;
    try {
      sample = ch.source->read(t);
    } catch (const std::exception& e) {
      fail(source, e.what());
      return false;
    } catch (...) {
      fail(source, "read() threw an exception that is not a std::exception");
      return false;
    }
    sample.time_s = t;
    sample.epoch_s = t + epoch_offset_s;
    {
      const std::lock_guard lock(ch.data_mutex);
      ch.samples.push_back(sample);
      ++ch.status.samples_taken;
      while (ch.samples.size() > options.max_samples_in_memory) {
        ch.samples.pop_front();
        ++ch.status.samples_dropped;
      }
    }
    {
      const std::lock_guard lock(progress_mutex);
      ch.latest_s = t;
    }
    progress_cv.notify_all();
    if (options.on_sample) {
      // An escaping exception would terminate the process from this thread; a callback that
      // cannot take samples (a full disk under a trace writer) ends this source's trace instead.
      try {
        options.on_sample(source, sample);
      } catch (const std::exception& e) {
        fail(source, std::string("on_sample callback failed: ") + e.what());
        return false;
      } catch (...) {
        fail(source, "on_sample callback threw an exception that is not a std::exception");
        return false;
      }
    }
    return true;
  }

  void run(std::size_t source) {
    Channel& ch = *channels[source];
    clockid_t own_clock{};
    const bool have_clock = pthread_getcpuclockid(pthread_self(), &own_clock) == 0;
    if (have_clock) {
      const std::lock_guard lock(cpu_mutex);
      ch.cpu_clock = own_clock;
      ch.cpu_clock_live = true;
    }

    // Reads happen at absolute times t0 + k·period, so the time spent reading and waking does not
    // accumulate into drift; a read that overruns skips the ticks it missed (next_tick).
    const Clock::time_point t0 = Clock::now();
    std::int64_t tick = 0;
    bool ok = take_sample(source);
    while (ok) {
      tick = next_tick(tick, Seconds(Clock::now() - t0).count(), period_s);
      bool stopping = false;
      {
        std::unique_lock lock(stop_mutex);
        stopping = stop_cv.wait_until(lock, t0 + tick * period, [this] { return stop_requested; });
      }
      // On stop this is the last sample, taken at the stop instant, so that a window closed just
      // before stop() still has a sample at or after its end.
      ok = take_sample(source);
      if (stopping) break;
    }

    {
      const std::lock_guard lock(progress_mutex);
      ch.active = false;
    }
    progress_cv.notify_all();
    if (have_clock) {
      // The clock id dies with the thread: bank its CPU time while it is still valid.
      const std::lock_guard lock(cpu_mutex);
      finished_cpu_s += cpu_seconds(own_clock);
      ch.cpu_clock_live = false;
    }
  }

  void stop_threads() {
    {
      const std::lock_guard lock(stop_mutex);
      stop_requested = true;
    }
    stop_cv.notify_all();
    for (auto& ch : channels) {
      if (ch->thread.joinable()) ch->thread.join();
    }
    running = false;
  }
};

Sampler::Sampler(std::vector<std::unique_ptr<PowerSource>> sources, SamplerOptions options)
    : impl_(std::make_unique<Impl>()) {
  if (!(options.period_s > 0) || !std::isfinite(options.period_s)) {
    throw InvalidInput("Sampler: expected a finite sampling period_s > 0, found " +
                       std::to_string(options.period_s));
  }
  impl_->period = std::chrono::duration_cast<Clock::duration>(Seconds(options.period_s));
  if (impl_->period <= Clock::duration::zero()) {
    throw InvalidInput("Sampler: sampling period_s " + std::to_string(options.period_s) +
                       " is below the steady clock's resolution");
  }
  impl_->period_s = Seconds(impl_->period).count();
  for (std::size_t i = 0; i < sources.size(); ++i) {
    if (!sources[i]) throw InvalidInput("Sampler: source " + std::to_string(i) + " is null");
    auto ch = std::make_unique<Impl::Channel>();
    ch->source = std::move(sources[i]);
    impl_->channels.push_back(std::move(ch));
  }
  impl_->options = std::move(options);

  // Steady time 0 is the midpoint of two steady reads around one system-clock read, so the
  // offset to UNIX time is off by at most half the (sub-microsecond) gap between them.
  const Clock::time_point before = Clock::now();
  const auto system_now = std::chrono::system_clock::now();
  const Clock::time_point after = Clock::now();
  impl_->epoch = before + (after - before) / 2;
  impl_->epoch_offset_s = Seconds(system_now.time_since_epoch()).count();
}

Sampler::~Sampler() { stop(); }

void Sampler::start() {
  const std::lock_guard lifecycle(impl_->lifecycle_mutex);
  if (impl_->running) return;
  {
    const std::lock_guard lock(impl_->stop_mutex);
    impl_->stop_requested = false;
  }
  const double start_s = now_s();
  impl_->running = true;
  for (std::size_t i = 0; i < impl_->channels.size(); ++i) {
    Impl::Channel& ch = *impl_->channels[i];
    {
      const std::lock_guard lock(ch.data_mutex);
      if (ch.status.failed) continue;
    }
    {
      const std::lock_guard lock(impl_->progress_mutex);
      ch.active = true;
    }
    try {
      ch.thread = std::thread([impl = impl_.get(), i] { impl->run(i); });
    } catch (...) {
      {
        const std::lock_guard lock(impl_->progress_mutex);
        ch.active = false;
      }
      impl_->stop_threads();
      throw;
    }
  }
  wait_for_samples(start_s, kFirstSampleWait_s);
}

void Sampler::stop() {
  const std::lock_guard lifecycle(impl_->lifecycle_mutex);
  if (!impl_->running) return;
  impl_->stop_threads();
}

double Sampler::now_s() const { return impl_->since_epoch(Clock::now()); }

double Sampler::epoch_offset_s() const { return impl_->epoch_offset_s; }

double Sampler::period_s() const { return impl_->period_s; }

std::size_t Sampler::source_count() const { return impl_->channels.size(); }

const SourceInfo& Sampler::info(std::size_t source) const {
  return impl_->channel(source).source->info();
}

SourceStatus Sampler::status(std::size_t source) const {
  const Impl::Channel& ch = impl_->channel(source);
  const std::lock_guard lock(ch.data_mutex);
  return ch.status;
}

std::vector<PowerSample> Sampler::samples(std::size_t source) const {
  const Impl::Channel& ch = impl_->channel(source);
  const std::lock_guard lock(ch.data_mutex);
  return {ch.samples.begin(), ch.samples.end()};
}

std::vector<PowerSample> Sampler::samples(std::size_t source, double from_s, double to_s) const {
  const Impl::Channel& ch = impl_->channel(source);
  const std::lock_guard lock(ch.data_mutex);
  // Samples are in time order, so the range is found by bisection and only it is copied: the
  // sampler threads are blocked from appending for as short a time as possible.
  const auto first = std::lower_bound(ch.samples.begin(), ch.samples.end(), from_s,
                                      [](const PowerSample& s, double t) { return s.time_s < t; });
  const auto last = std::upper_bound(first, ch.samples.end(), to_s,
                                     [](double t, const PowerSample& s) { return t < s.time_s; });
  return {first, last};
}

double Sampler::cpu_time_s() const {
  const std::lock_guard lock(impl_->cpu_mutex);
  double total = impl_->finished_cpu_s;
  // Holding cpu_mutex keeps every live thread from exiting (it takes the mutex to bank its time
  // first), so the clock ids read here are still valid.
  for (const auto& ch : impl_->channels) {
    if (ch->cpu_clock_live) total += cpu_seconds(ch->cpu_clock);
  }
  return total;
}

bool Sampler::wait_for_samples(double time_s, double timeout_s) const {
  const double bounded = std::isnan(timeout_s) ? 0.0 : std::clamp(timeout_s, 0.0, kLongestWait_s);
  const Clock::time_point deadline =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(Seconds(bounded));
  std::unique_lock lock(impl_->progress_mutex);
  return impl_->progress_cv.wait_until(lock, deadline,
                                       [&] { return impl_->all_sampled_since(time_s); });
}

}  // namespace nnergy::measure
