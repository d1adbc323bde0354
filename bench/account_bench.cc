// Energy accounting at scale: one million events and 100,000 power samples (seed 001 §3.3's
// optimised sweep). Target: under 2 s per accounting.
#include <benchmark/benchmark.h>

#include <memory>
#include <string>
#include <vector>

#include "nnergy/account/energy_sweep.h"
#include "nnergy/account/footprint.h"
#include "nnergy/account/hierarchy.h"
#include "nnergy/account/trace_reader.h"

namespace {

using nnergy::account::TraceEvent;

constexpr std::size_t kEvents = 1'000'000;
constexpr std::size_t kSamples = 100'000;
constexpr std::size_t kThreads = 4;
constexpr double kSpan_s = 100.0;

// kThreads threads, each a sequence of module ranges holding 4 ops (5 events per group), over
// kSpan_s seconds; 12 self-similar layers. The events' names view `names`.
std::vector<TraceEvent> make_events(nnergy::account::NameTable& names) {
  std::vector<TraceEvent> events;
  events.reserve(kEvents);
  const std::size_t groups_per_thread = kEvents / 5 / kThreads;
  const double group_s = kSpan_s / static_cast<double>(groups_per_thread);
  const char* ops[] = {"aten::linear", "aten::addmm", "aten::relu", "aten::add"};
  for (std::size_t thread = 0; thread < kThreads; ++thread) {
    for (std::size_t g = 0; g < groups_per_thread; ++g) {
      const double start = static_cast<double>(g) * group_s + 1e-6 * static_cast<double>(thread);
      TraceEvent module;
      module.name = names.intern("module::Net.layers." + std::to_string(g % 12));
      module.module = module.name.substr(8);
      module.is_scope = true;
      module.device = "cpu";
      module.thread = thread;
      module.start_s = start;
      module.duration_s = 0.9 * group_s;
      events.push_back(module);
      for (int k = 0; k < 4; ++k) {
        TraceEvent op;
        op.name = ops[k];
        op.device = "cpu";
        op.thread = thread;
        op.start_s = start + (0.05 + 0.2 * k) * group_s;
        op.duration_s = 0.15 * group_s;
        events.push_back(op);
      }
    }
  }
  return events;
}

nnergy::account::PowerTimeline make_power() {
  nnergy::account::PowerTimeline t;
  t.device = "cpu";
  t.source_ids = {"bench"};
  for (std::size_t i = 0; i < kSamples; ++i) {
    t.time_s.push_back(-0.5 + (kSpan_s + 1.0) * static_cast<double>(i) / kSamples);
    t.power_w.push_back(100.0 + static_cast<double>(i % 17));
  }
  return t;
}

// The same events as a torch-1.13-style bare Chrome trace (µs).
std::string make_trace_text(const std::vector<TraceEvent>& events) {
  std::string text = "[";
  text.reserve(events.size() * 100);
  for (std::size_t i = 0; i < events.size(); ++i) {
    const TraceEvent& e = events[i];
    if (i > 0) text += ",\n";
    text += "{\"name\":\"" + std::string(e.name) +
            "\",\"ph\":\"X\",\"ts\":" + std::to_string(e.start_s * 1e6) +
            ",\"dur\":" + std::to_string(e.duration_s * 1e6) +
            ",\"tid\":" + std::to_string(e.thread) + ",\"pid\":\"CPU functions\",\"args\":{}}";
  }
  return text + "]";
}

// Hierarchy, sweep and TEF/STEF on events already in memory.
void BM_AccountMillionEvents(benchmark::State& state) {
  const auto names = std::make_shared<nnergy::account::NameTable>();
  const std::vector<TraceEvent> raw = make_events(*names);
  const std::vector<nnergy::account::PowerTimeline> power = {make_power()};
  const auto rules = nnergy::account::default_summarize_rules();
  for (auto _ : state) {
    state.PauseTiming();
    nnergy::account::EventTrace trace;
    trace.names = names;
    trace.events = raw;
    state.ResumeTiming();
    nnergy::account::resolve_hierarchy(trace);
    const auto accounting = nnergy::account::account_energy(trace.events, power, {});
    const auto stef = nnergy::account::summarize(
        nnergy::account::tensor_energy_footprint(trace.events, accounting), rules);
    benchmark::DoNotOptimize(stef.data());
  }
  state.counters["events"] = static_cast<double>(kEvents);
  state.counters["samples"] = static_cast<double>(kSamples);
}
BENCHMARK(BM_AccountMillionEvents)->Unit(benchmark::kMillisecond)->Iterations(3);

// The same with the trace's JSON text (112 MB, in memory) read into events first: streamed in
// batches of events, each parsed with simdjson.
void BM_AccountMillionEventsWithParse(benchmark::State& state) {
  nnergy::account::NameTable names;
  const std::string text = make_trace_text(make_events(names));
  const std::vector<nnergy::account::PowerTimeline> power = {make_power()};
  const auto rules = nnergy::account::default_summarize_rules();
  nnergy::account::TraceReaderRegistry readers;
  nnergy::account::register_standard_trace_readers(readers);
  for (auto _ : state) {
    nnergy::account::EventTrace trace = readers.read_text(text, "bench.json");
    nnergy::account::resolve_hierarchy(trace);
    const auto accounting = nnergy::account::account_energy(trace.events, power, {});
    const auto stef = nnergy::account::summarize(
        nnergy::account::tensor_energy_footprint(trace.events, accounting), rules);
    benchmark::DoNotOptimize(stef.data());
  }
  state.counters["trace_bytes"] = static_cast<double>(text.size());
}
BENCHMARK(BM_AccountMillionEventsWithParse)->Unit(benchmark::kMillisecond)->Iterations(3);

}  // namespace

BENCHMARK_MAIN();
