#pragma once

#include <simdjson.h>

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace nnergy::account {

/// The top-level members of a Chrome-trace-format object other than its event array
/// ("baseTimeNanoseconds", "traceName", "deviceProperties", ...), each kept as its JSON text.
struct TraceMembers {
  std::vector<std::pair<std::string, std::string>> raw;  ///< key (unescaped) → the value's JSON
  /// The member `key` as a number, or nothing when absent or not a number.
  std::optional<double> number(std::string_view key) const;
};

/// What the stream found around the events.
struct TraceShape {
  bool bare_array = false;       ///< the document is an array of events (torch 1.13)
  bool has_event_array = false;  ///< a bare array, or an object with a "traceEvents" array
  std::size_t event_count = 0;   ///< elements of the event array
  std::size_t bytes_read = 0;    ///< bytes of the input read so far (all, once streaming ends)
  TraceMembers members;          ///< the other top-level members of an object
};

/// Called once per batch of consecutive events: `events` holds elements `first_index`,
/// `first_index` + 1, ... of the event array, parsed; `so_far` has the members that precede the
/// array (all of them, for members written before "traceEvents"). The array lives only during
/// the call.
using EventBatchHandler = std::function<void(
    const TraceShape& so_far, const simdjson::dom::array& events, std::size_t first_index)>;

/// Pulls the next bytes of a trace into `buffer` (at most `capacity`), returning how many; 0 at
/// the end. Throws InvalidInput when the source cannot be read.
using ByteSource = std::function<std::size_t(char* buffer, std::size_t capacity)>;

/// Reads a Chrome-trace-format JSON document (a bare array of events, or an object whose
/// "traceEvents" member is the array) from `source` in a single pass, handing its events to
/// `on_batch` in batches of about `batch_bytes` of JSON text, and returns the whole shape. Memory
/// is bounded by the batch and the read buffer, not by the trace: simdjson parses whole
/// documents, so the event array is split here into batches of whole elements (strings, escapes
/// and nesting are tracked; the JSON inside an element is checked by simdjson when its batch is
/// parsed). Throws InvalidInput naming `file_label` and the byte offset or event range for JSON
/// that is malformed, truncated, or neither an array nor an object.
TraceShape stream_trace_events(const ByteSource& source, const std::string& file_label,
                               const EventBatchHandler& on_batch,
                               std::size_t batch_bytes = std::size_t{1} << 20);

/// A ByteSource over text already in memory (the text must outlive the source).
ByteSource text_source(std::string_view text);

}  // namespace nnergy::account
