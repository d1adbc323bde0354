// libFuzzer target: the program-trace readers of `nnergy account` (Chrome/Kineto JSON, torch
// 1.13's bare arrays of X events, TF1 timelines): TraceReaderRegistry::read_text with the
// standard readers, then resolve_hierarchy, as the account run does before it aligns the trace
// with the power samples. The event array is also streamed in batches of about 64 bytes from a
// source that hands out 3 bytes at a time: every batch and block boundary must give the same
// outcome (the same number of events, or an InvalidInput for both) as one batch.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>

#include "fuzz_support.h"
#include "nnergy/account/hierarchy.h"
#include "nnergy/account/trace_reader.h"
#include "nnergy/account/trace_stream.h"
#include "nnergy/core/error.h"

namespace {

// The number of elements of the event array, or nothing when the stream refuses the text.
std::optional<std::size_t> streamed_count(const std::string& text, std::size_t step,
                                          std::size_t batch_bytes) {
  std::size_t offset = 0;
  const nnergy::account::ByteSource source = [&](char* buffer, std::size_t capacity) {
    const std::size_t n = std::min({step, capacity, text.size() - offset});
    std::memcpy(buffer, text.data() + offset, n);
    offset += n;
    return n;
  };
  std::size_t seen = 0;
  try {
    const nnergy::account::TraceShape shape = nnergy::account::stream_trace_events(
        source, "fuzz-trace.json",
        [&](const nnergy::account::TraceShape&, const simdjson::dom::array& events,
            std::size_t first) {
          if (first != seen) {
            std::fprintf(stderr, "FINDING: batch starts at %zu, expected %zu\n", first, seen);
            std::abort();
          }
          seen += events.size();
        },
        batch_bytes);
    if (shape.event_count != seen) {
      std::fprintf(stderr, "FINDING: %zu events counted, %zu handed over\n", shape.event_count,
                   seen);
      std::abort();
    }
    return seen;
  } catch (const nnergy::InvalidInput&) {
    return std::nullopt;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const nnergy::account::TraceReaderRegistry* registry = [] {
    auto* r = new nnergy::account::TraceReaderRegistry;
    nnergy::account::register_standard_trace_readers(*r);
    return r;
  }();
  const std::string text = nnergy::fuzz::as_text(data, size);
  return nnergy::fuzz::run_one("account_trace", [&] {
    const std::optional<std::size_t> whole = streamed_count(text, text.size() + 1, 1 << 20);
    const std::optional<std::size_t> dripped = streamed_count(text, 3, 64);
    if (whole.has_value() != dripped.has_value() || (whole && *whole != *dripped)) {
      std::fprintf(stderr, "FINDING: one batch gives %s, 64-byte batches give %s\n",
                   whole ? std::to_string(*whole).c_str() : "an error",
                   dripped ? std::to_string(*dripped).c_str() : "an error");
      std::abort();
    }
    nnergy::account::EventTrace trace = registry->read_text(text, "fuzz-trace.json");
    nnergy::account::resolve_hierarchy(trace);
  });
}
