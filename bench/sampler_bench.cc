// The sampler's own cost: CPU time of its threads per second of wall time while it samples a
// trivial source (target: under 1 % of one core at the default 20 ms period), and the cost of
// analyzing a measurement window.
#include <benchmark/benchmark.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

#include "nnergy/measure/measurement_window.h"
#include "nnergy/measure/sampler.h"

namespace nnergy::measure {
namespace {

// A source whose read costs next to nothing, so that what is measured is the sampler itself:
// waking up on schedule, timestamping, storing and publishing the sample.
class TrivialSource : public PowerSource {
 public:
  TrivialSource() {
    info_.id = "trivial";
    info_.kind = "synthetic";
    info_.has_energy_counter = true;
  }
  const SourceInfo& info() const override { return info_; }
  PowerSample read(double time_s) override {
    PowerSample s;
    s.power_w = 250.0;
    s.energy_j = 250.0 * time_s;
    return s;
  }

 private:
  SourceInfo info_;
};

// One iteration runs a sampler for `duration_ms` at a period of `period_us` µs with `sources`
// trivial sources. Counters: cpu_fraction_of_one_core = sampler CPU time / wall time, and
// samples_per_s. The benchmark's own "CPU" column is the main thread's (which only sleeps), so
// the counter is the figure to read.
void BM_SamplerOverhead(benchmark::State& state) {
  const auto period_us = state.range(0);
  const auto duration = std::chrono::milliseconds(state.range(1));
  const auto source_count = static_cast<std::size_t>(state.range(2));
  double cpu_s = 0;
  double wall_s = 0;
  double samples = 0;
  for (auto _ : state) {
    std::vector<std::unique_ptr<PowerSource>> sources;
    for (std::size_t i = 0; i < source_count; ++i)
      sources.push_back(std::make_unique<TrivialSource>());
    SamplerOptions options;
    options.period_s = static_cast<double>(period_us) * 1e-6;
    Sampler sampler(std::move(sources), options);
    const auto begin = std::chrono::steady_clock::now();
    sampler.start();
    std::this_thread::sleep_for(duration);
    sampler.stop();
    wall_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
    cpu_s += sampler.cpu_time_s();
    for (std::size_t i = 0; i < source_count; ++i) {
      samples += static_cast<double>(sampler.status(i).samples_taken);
    }
  }
  state.counters["cpu_fraction_of_one_core"] = cpu_s / wall_s;
  state.counters["cpu_us_per_sample"] = 1e6 * cpu_s / samples;
  state.counters["samples_per_s"] = samples / wall_s;
}
BENCHMARK(BM_SamplerOverhead)
    ->ArgNames({"period_us", "duration_ms", "sources"})
    ->Args({20000, 5000, 1})
    ->Args({20000, 5000, 4})
    ->Args({1000, 2000, 1})
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// analyze_window over a window of `n` samples with counter, clocks and the 3σ filter.
void BM_AnalyzeWindow(benchmark::State& state) {
  const auto n = state.range(0);
  std::vector<PowerSample> samples;
  for (std::int64_t k = 0; k < n; ++k) {
    PowerSample s;
    s.time_s = 0.02 * static_cast<double>(k);
    s.power_w = 250.0 + 10.0 * std::sin(static_cast<double>(k));
    s.energy_j = 250.0 * s.time_s;
    s.sm_clock_mhz = k % 50 == 0 ? 1200.0 : 1410.0;
    s.memory_clock_mhz = 1593.0;
    s.temperature_c = 60.0;
    samples.push_back(s);
  }
  SourceInfo info;
  info.id = "bench";
  WindowOptions options;
  options.exclude_off_clock = true;
  options.iterations = 1000;
  const double end_s = samples.back().time_s;
  for (auto _ : state) {
    benchmark::DoNotOptimize(analyze_window(info, samples, 0.01, end_s - 0.01, options));
  }
  state.SetItemsProcessed(state.iterations() * n);
}
BENCHMARK(BM_AnalyzeWindow)->Arg(500)->Arg(50000)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace nnergy::measure

BENCHMARK_MAIN();
