#include "nnergy/measure/sampler.h"

#include <gtest/gtest.h>
#include <time.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <functional>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "nnergy/core/error.h"
#include "nnergy/measure/measurement_window.h"

namespace nnergy::measure {
namespace {

// Waits in these tests only bound how long a broken sampler may hang the test; a working one
// meets the condition in milliseconds. Nothing is asserted about how long anything took.
constexpr auto kPatience = std::chrono::seconds(20);
constexpr double kWatts = 250.0;

// A source with a constant power and an exact energy counter E(t) = P·t, so that any window's
// energy is known exactly; optionally throws on its n-th read or burns CPU time in every read.
class FakeSource : public PowerSource {
 public:
  struct Behaviour {
    int throw_on_read = 0;  ///< 1-based read that throws; 0 never
    bool throw_device_error = true;
    double cpu_burn_s = 0;  ///< thread CPU time each read spends spinning
  };

  explicit FakeSource(std::string id) : FakeSource(std::move(id), Behaviour{}) {}
  FakeSource(std::string id, Behaviour behaviour) : behaviour_(behaviour) {
    info_.id = std::move(id);
    info_.kind = "synthetic";
    info_.has_energy_counter = true;
  }

  const SourceInfo& info() const override { return info_; }

  PowerSample read(double time_s) override {
    ++reads_;
    if (reads_ == behaviour_.throw_on_read) {
      if (behaviour_.throw_device_error) throw DeviceError("GPU fell off the bus");
      throw std::runtime_error("sensor returned garbage");
    }
    if (behaviour_.cpu_burn_s > 0) burn_cpu(behaviour_.cpu_burn_s);
    PowerSample s;
    s.power_w = kWatts;
    s.energy_j = kWatts * time_s;
    return s;
  }

 private:
  static double thread_cpu_s() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
  }
  static void burn_cpu(double seconds) {
    const double until = thread_cpu_s() + seconds;
    while (thread_cpu_s() < until) {
    }
  }

  SourceInfo info_;
  Behaviour behaviour_;
  int reads_ = 0;
};

std::vector<std::unique_ptr<PowerSource>> one_source(std::unique_ptr<PowerSource> source) {
  std::vector<std::unique_ptr<PowerSource>> sources;
  sources.push_back(std::move(source));
  return sources;
}

SamplerOptions every(double period_s) {
  SamplerOptions options;
  options.period_s = period_s;
  return options;
}

// Polls `condition` until it holds; false if it still does not after kPatience.
bool eventually(const std::function<bool()>& condition) {
  const auto deadline = std::chrono::steady_clock::now() + kPatience;
  while (!condition()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

TEST(NextTick, SkipsMissedTicksInsteadOfBursting) {
  // Ticks every 20 ms: a read ending 1 ms after t0 waits for tick 1 (20 ms).
  EXPECT_EQ(next_tick(0, 0.001, 0.020), 1);
  // A read of tick 1 that overran to 65 ms missed ticks 2 (40 ms) and 3 (60 ms): next is 4.
  EXPECT_EQ(next_tick(1, 0.065, 0.020), 4);
  // Never a tick already read, even if the clock seems behind it.
  EXPECT_EQ(next_tick(5, 0.030, 0.020), 6);
  EXPECT_THROW(next_tick(0, 1.0, 0.0), InvalidInput);
}

TEST(Sampler, SamplesArriveInOrderWithUnixTimes) {
  Sampler sampler(one_source(std::make_unique<FakeSource>("fake")), every(0.002));
  ASSERT_EQ(sampler.source_count(), 1u);
  EXPECT_EQ(sampler.info(0).id, "fake");
  EXPECT_DOUBLE_EQ(sampler.period_s(), 0.002);
  sampler.start();
  ASSERT_TRUE(eventually([&] { return sampler.status(0).samples_taken >= 10; }));
  sampler.stop();

  const std::vector<PowerSample> samples = sampler.samples(0);
  ASSERT_GE(samples.size(), 10u);
  EXPECT_EQ(samples.size(), sampler.status(0).samples_taken);
  EXPECT_EQ(sampler.status(0).samples_dropped, 0u);
  for (std::size_t i = 0; i < samples.size(); ++i) {
    if (i > 0) {
      EXPECT_GT(samples[i].time_s, samples[i - 1].time_s);
    }
    EXPECT_EQ(samples[i].epoch_s, samples[i].time_s + sampler.epoch_offset_s());
    ASSERT_TRUE(samples[i].power_w && samples[i].energy_j);
    EXPECT_EQ(*samples[i].power_w, kWatts);
    // The source saw the same time the sample carries.
    EXPECT_EQ(*samples[i].energy_j, kWatts * samples[i].time_s);
  }

  // The offset maps steady time to the system clock (1 s allows for a clock step meanwhile).
  const double unix_now =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  EXPECT_NEAR(sampler.epoch_offset_s() + sampler.now_s(), unix_now, 1.0);

  // The range query returns exactly the samples inside it.
  const std::vector<PowerSample> middle = sampler.samples(0, samples[2].time_s, samples[5].time_s);
  ASSERT_EQ(middle.size(), 4u);
  EXPECT_EQ(middle.front().time_s, samples[2].time_s);
  EXPECT_EQ(middle.back().time_s, samples[5].time_s);
  EXPECT_TRUE(sampler.samples(0, samples.back().time_s + 1, samples.back().time_s + 2).empty());
}

TEST(Sampler, StartSamplesImmediatelyAndStopSamplesOnceMore) {
  // With an hour between ticks, the only samples are the one start() takes and the one stop()
  // takes; stop() must not wait for the next tick.
  Sampler sampler(one_source(std::make_unique<FakeSource>("fake")), every(3600));
  sampler.start();
  EXPECT_EQ(sampler.samples(0).size(), 1u);
  sampler.start();
  EXPECT_EQ(sampler.samples(0).size(), 1u);
  const double before_stop_s = sampler.now_s();
  sampler.stop();
  const std::vector<PowerSample> samples = sampler.samples(0);
  ASSERT_EQ(samples.size(), 2u);
  EXPECT_GE(samples.back().time_s, before_stop_s);
  sampler.stop();
  EXPECT_EQ(sampler.samples(0).size(), 2u);
  // A stopped sampler can be started again; it appends to the same trace.
  sampler.start();
  EXPECT_EQ(sampler.samples(0).size(), 3u);
}

TEST(Sampler, DestructorStopsRunningThreads) {
  std::atomic<std::size_t> streamed = 0;
  {
    SamplerOptions options = every(0.001);
    options.on_sample = [&](std::size_t, const PowerSample&) { ++streamed; };
    Sampler sampler(one_source(std::make_unique<FakeSource>("fake")), options);
    sampler.start();
    ASSERT_TRUE(eventually([&] { return streamed >= 3; }));
  }
  const std::size_t after_destruction = streamed;
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(streamed, after_destruction);
}

TEST(Sampler, MemoryBoundDropsOldestSamplesAndCountsThem) {
  std::mutex mutex;
  std::vector<double> streamed_times;
  SamplerOptions options = every(0.001);
  options.max_samples_in_memory = 5;
  options.on_sample = [&](std::size_t source, const PowerSample& s) {
    EXPECT_EQ(source, 0u);
    const std::lock_guard lock(mutex);
    streamed_times.push_back(s.time_s);
  };
  Sampler sampler(one_source(std::make_unique<FakeSource>("fake")), options);
  sampler.start();
  ASSERT_TRUE(eventually([&] { return sampler.status(0).samples_taken >= 20; }));
  sampler.stop();

  const SourceStatus status = sampler.status(0);
  const std::vector<PowerSample> kept = sampler.samples(0);
  ASSERT_EQ(kept.size(), 5u);
  EXPECT_EQ(status.samples_dropped, status.samples_taken - 5);
  // Everything was streamed, and memory holds the newest five.
  const std::lock_guard lock(mutex);
  ASSERT_EQ(streamed_times.size(), status.samples_taken);
  for (std::size_t i = 0; i < kept.size(); ++i) {
    EXPECT_EQ(kept[i].time_s, streamed_times[streamed_times.size() - 5 + i]);
  }
}

TEST(Sampler, FailingSourceEndsWhileOthersKeepSampling) {
  std::vector<std::unique_ptr<PowerSource>> sources;
  sources.push_back(std::make_unique<FakeSource>("good"));
  sources.push_back(std::make_unique<FakeSource>("bad", FakeSource::Behaviour{.throw_on_read = 3}));
  sources.push_back(std::make_unique<FakeSource>(
      "odd", FakeSource::Behaviour{.throw_on_read = 1, .throw_device_error = false}));
  Sampler sampler(std::move(sources), every(0.001));
  sampler.start();
  ASSERT_TRUE(eventually([&] { return sampler.status(1).failed; }));
  const std::size_t good_at_failure = sampler.status(0).samples_taken;
  ASSERT_TRUE(eventually([&] { return sampler.status(0).samples_taken >= good_at_failure + 5; }));
  // Failed sources are not waited for.
  EXPECT_TRUE(sampler.wait_for_samples(sampler.now_s(), kPatience.count()));
  sampler.stop();

  EXPECT_FALSE(sampler.status(0).failed);
  const SourceStatus bad = sampler.status(1);
  EXPECT_TRUE(bad.failed);
  EXPECT_EQ(bad.error, "GPU fell off the bus");
  EXPECT_EQ(bad.samples_taken, 2u);
  EXPECT_EQ(sampler.samples(1).size(), 2u);
  const SourceStatus odd = sampler.status(2);
  EXPECT_TRUE(odd.failed);
  EXPECT_EQ(odd.error, "sensor returned garbage");
  EXPECT_EQ(odd.samples_taken, 0u);
}

TEST(Sampler, ThrowingCallbackFailsItsSource) {
  SamplerOptions options = every(0.001);
  options.on_sample = [](std::size_t, const PowerSample&) {
    throw std::runtime_error("disk full");
  };
  Sampler sampler(one_source(std::make_unique<FakeSource>("fake")), options);
  sampler.start();
  ASSERT_TRUE(eventually([&] { return sampler.status(0).failed; }));
  EXPECT_EQ(sampler.status(0).error, "on_sample callback failed: disk full");
  EXPECT_EQ(sampler.status(0).samples_taken, 1u);
}

TEST(Sampler, CpuTimeIncludesFinishedThreads) {
  // Every read spins for 1 ms of its thread's CPU time, so the sampler threads used at least
  // 1 ms per sample — a lower bound that holds however the machine schedules them.
  constexpr double kBurn_s = 0.001;
  std::vector<std::unique_ptr<PowerSource>> sources;
  sources.push_back(
      std::make_unique<FakeSource>("a", FakeSource::Behaviour{.cpu_burn_s = kBurn_s}));
  sources.push_back(
      std::make_unique<FakeSource>("b", FakeSource::Behaviour{.cpu_burn_s = kBurn_s}));
  Sampler sampler(std::move(sources), every(0.005));
  EXPECT_EQ(sampler.cpu_time_s(), 0.0);
  sampler.start();
  ASSERT_TRUE(eventually([&] { return sampler.status(0).samples_taken >= 3; }));
  EXPECT_GE(sampler.cpu_time_s(), 3 * kBurn_s);
  sampler.stop();
  const double taken =
      static_cast<double>(sampler.status(0).samples_taken + sampler.status(1).samples_taken);
  const double after_stop = sampler.cpu_time_s();
  EXPECT_GE(after_stop, taken * kBurn_s);
  // Stopped threads keep their banked time and add nothing.
  EXPECT_EQ(sampler.cpu_time_s(), after_stop);
}

TEST(Sampler, RejectsInvalidConstruction) {
  EXPECT_THROW(Sampler(one_source(std::make_unique<FakeSource>("f")), every(0)), InvalidInput);
  EXPECT_THROW(Sampler(one_source(std::make_unique<FakeSource>("f")), every(-0.02)), InvalidInput);
  EXPECT_THROW(Sampler(one_source(std::make_unique<FakeSource>("f")), every(std::nan(""))),
               InvalidInput);
  EXPECT_THROW(Sampler(one_source(nullptr), every(0.02)), InvalidInput);
  Sampler sampler(one_source(std::make_unique<FakeSource>("f")), every(0.02));
  EXPECT_THROW(sampler.status(1), InternalError);
  EXPECT_THROW(sampler.samples(1), InternalError);
  EXPECT_THROW(sampler.info(1), InternalError);
}

// The Meter over a running sampler. The fake counter is exactly linear in time, so the
// interpolation at both window edges is exact; the only possible error is an edge left without a
// bracketing sample (the end's wait timed out on an overloaded machine), which loses at most the
// energy of one sampling period. That bounds the tolerance.
constexpr double kMeterPeriod_s = 0.005;
constexpr double kOnePeriodEnergy_j = kWatts * kMeterPeriod_s;

TEST(Meter, WindowEnergyIsPowerTimesLength) {
  std::vector<std::unique_ptr<PowerSource>> sources;
  sources.push_back(std::make_unique<FakeSource>("exact"));
  sources.push_back(
      std::make_unique<FakeSource>("dead", FakeSource::Behaviour{.throw_on_read = 1}));
  Sampler sampler(std::move(sources), every(kMeterPeriod_s));
  sampler.start();
  Meter meter(sampler);
  const std::size_t handle = meter.begin();
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  WindowOptions options;
  options.iterations = 4;
  const Measurement m = meter.end(handle, options);

  ASSERT_EQ(m.sources.size(), 2u);
  const double length_s = m.end_s - m.begin_s;
  ASSERT_GT(length_s, 0.0);
  const SourceMeasurement& exact = m.sources[0];
  EXPECT_EQ(exact.info.id, "exact");
  EXPECT_FALSE(exact.source_failed);
  EXPECT_EQ(exact.time_s, length_s);
  EXPECT_EQ(exact.energy_method, "counter");
  ASSERT_TRUE(exact.energy_j && exact.power_mean_w && exact.energy_from_power_j);
  EXPECT_NEAR(*exact.energy_j, kWatts * length_s, kOnePeriodEnergy_j);
  EXPECT_NEAR(*exact.power_mean_w, kWatts, 1e-9);
  EXPECT_NEAR(*exact.energy_from_power_j, kWatts * length_s, 1e-9);
  ASSERT_TRUE(exact.energy_per_iteration_j);
  EXPECT_NEAR(*exact.energy_per_iteration_j, kWatts * length_s / 4, kOnePeriodEnergy_j / 4);

  const SourceMeasurement& dead = m.sources[1];
  EXPECT_TRUE(dead.source_failed);
  EXPECT_EQ(dead.source_error, "GPU fell off the bus");
  EXPECT_FALSE(dead.energy_j);
  EXPECT_EQ(dead.energy_method, "");
}

TEST(Meter, OverlappingWindowsFromSeveralThreads) {
  Sampler sampler(one_source(std::make_unique<FakeSource>("exact")), every(kMeterPeriod_s));
  sampler.start();
  Meter meter(sampler);
  const std::size_t outer = meter.begin();
  std::vector<Measurement> inner(4);
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < inner.size(); ++i) {
    threads.emplace_back([&, i] {
      const std::size_t handle = meter.begin();
      std::this_thread::sleep_for(std::chrono::milliseconds(20 + 10 * i));
      inner[i] = meter.end(handle);
    });
  }
  for (std::thread& t : threads) t.join();
  const Measurement whole = meter.end(outer);

  for (const Measurement& m : inner) {
    ASSERT_EQ(m.sources.size(), 1u);
    ASSERT_TRUE(m.sources[0].energy_j);
    EXPECT_NEAR(*m.sources[0].energy_j, kWatts * (m.end_s - m.begin_s), kOnePeriodEnergy_j);
    EXPECT_GE(m.begin_s, whole.begin_s);
    EXPECT_LE(m.end_s, whole.end_s);
  }
  ASSERT_TRUE(whole.sources[0].energy_j);
  EXPECT_NEAR(*whole.sources[0].energy_j, kWatts * (whole.end_s - whole.begin_s),
              kOnePeriodEnergy_j);
}

TEST(Meter, UnknownOrClosedHandleIsAnInternalError) {
  Sampler sampler(one_source(std::make_unique<FakeSource>("exact")), every(kMeterPeriod_s));
  Meter meter(sampler);
  EXPECT_THROW(meter.end(42), InternalError);
  const std::size_t handle = meter.begin();
  // Invalid options leave the window open.
  WindowOptions bad;
  bad.iterations = 0;
  EXPECT_THROW(meter.end(handle, bad), InvalidInput);
  // A sampler that was never started has no samples: empty results, not a crash.
  const Measurement m = meter.end(handle);
  ASSERT_EQ(m.sources.size(), 1u);
  EXPECT_EQ(m.sources[0].samples_total, 0u);
  EXPECT_FALSE(m.sources[0].energy_j);
  EXPECT_THROW(meter.end(handle), InternalError);
}

}  // namespace
}  // namespace nnergy::measure
