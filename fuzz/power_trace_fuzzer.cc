// libFuzzer target: power-trace files (measure::read_trace_text, the in-memory form of
// read_trace_file): nnergy's `monitor -o` CSV and JSON, nvidia-smi --format=csv logs.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <ctime>

#include "fuzz_support.h"
#include "nnergy/measure/trace_file.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // nvidia-smi timestamps are local time (mktime): fix the zone so that runs reproduce.
  setenv("TZ", "UTC", 1);
  tzset();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return nnergy::fuzz::run_one("power_trace", [&] {
    nnergy::measure::TraceWarnings warnings;
    const auto traces = nnergy::measure::read_trace_text(nnergy::fuzz::as_text(data, size),
                                                         "fuzz-trace.csv", &warnings);
    volatile std::size_t sink = traces.size() + warnings.messages.size();
    (void)sink;
  });
}
