#pragma once

#include <simdjson.h>

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "nnergy/account/trace_event.h"
#include "nnergy/account/trace_stream.h"
#include "nnergy/core/registry.h"

namespace nnergy::account {

/// One trace being read by a TraceReader: events arrive in file order, then `finish` returns the
/// trace. Used by one thread.
class TraceReading {
 public:
  virtual ~TraceReading() = default;
  /// Takes element `index` of the event array. Throws InvalidInput naming the file, the event
  /// index and the field for missing or mistyped fields.
  virtual void add(const simdjson::dom::element& event, std::size_t index) = 0;
  /// Called once, after the first batch, when the input's size is known: `share_read` (0–1] of
  /// it has been read. A trace's events are regular, so a reading may reserve room for the rest
  /// rather than grow its event vector by doubling (which holds up to three times the events).
  virtual void reserve_for_share(double share_read) { (void)share_read; }
  /// The trace, once every event was added; `shape` has all top-level members. Events with
  /// negative durations were dropped with a counted warning.
  virtual EventTrace finish(const TraceShape& shape) = 0;
};

/// Reads one family of program-trace files (Chrome/Kineto, TF1 timelines) into an EventTrace, a
/// batch of events at a time (the file is never held whole). Implementations are stateless:
/// thread-safe.
class TraceReader {
 public:
  virtual ~TraceReader() = default;
  /// Short name used in messages and in `EventTrace::format`, e.g. "chrome".
  virtual std::string name() const = 0;
  /// True when a trace of this shape (the members before its event array) whose first batch of
  /// events is `first_events` (nullptr: no events) is in this reader's format.
  virtual bool recognizes(const TraceShape& shape,
                          const simdjson::dom::array* first_events) const = 0;
  /// Starts reading a trace this reader recognized.
  virtual std::unique_ptr<TraceReading> start(const TraceShape& shape,
                                              const std::string& file_label) const = 0;
};

/// The trace readers of a build, by name (core/registry.h), tried in registration order. Not
/// thread-safe to fill; reading from a filled registry is.
class TraceReaderRegistry : public Registry<std::unique_ptr<TraceReader>> {
 public:
  TraceReaderRegistry() : Registry("trace reader") {}
  /// Adds `reader` under its name(); throws InternalError for a duplicate name.
  void add(std::unique_ptr<TraceReader> reader);
  /// Reads `text` with the first reader that recognizes it. Throws InvalidInput naming
  /// `file_label` for malformed JSON or a format no reader recognizes.
  EventTrace read_text(std::string_view text, const std::string& file_label) const;
  /// The same for a file, read in blocks; throws InvalidInput when it cannot be read.
  EventTrace read_file(const std::filesystem::path& path) const;
  /// The same for any source of bytes; `total_bytes`, when known, lets the reading reserve room
  /// for its events once the first batch is read.
  EventTrace read_stream(const ByteSource& source, const std::string& file_label,
                         std::optional<std::size_t> total_bytes = std::nullopt) const;
};

/// Reserves room in `events` for a whole trace of which `share_read` (0–1] gave these events, and
/// a margin of 2 %. Used by readings' `reserve_for_share`.
void reserve_events_for_share(std::vector<TraceEvent>& events, double share_read);

/// Fills `registry` with the standard readers: "tf-timeline" (TF1 timelines: epoch µs, scoped
/// names in args.name, devices from process_name metadata) and "chrome" (Kineto traces, objects
/// with "traceEvents" and "baseTimeNanoseconds", and torch 1.13's bare arrays of X events).
void register_standard_trace_readers(TraceReaderRegistry& registry);

/// Reader for Chrome/Kineto traces and torch 1.13's bare arrays.
std::unique_ptr<TraceReader> make_chrome_trace_reader();
/// Reader for TensorFlow 1 timelines (tensorflow.python.client.timeline).
std::unique_ptr<TraceReader> make_tf_timeline_reader();

}  // namespace nnergy::account
