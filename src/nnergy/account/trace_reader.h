#pragma once

#include <simdjson.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "nnergy/account/trace_event.h"

namespace nnergy::account {

/// Reads one family of program-trace files (Chrome/Kineto, TF1 timelines) into an EventTrace.
/// Implementations are stateless: thread-safe.
class TraceReader {
 public:
  virtual ~TraceReader() = default;
  /// Short name used in messages and in `EventTrace::format`, e.g. "chrome".
  virtual std::string name() const = 0;
  /// True when `document` (the whole parsed file) is in this reader's format.
  virtual bool recognizes(const simdjson::dom::element& document) const = 0;
  /// Reads the events. Throws InvalidInput naming `file_label`, the event index and the field for
  /// missing or mistyped fields; drops events with negative durations with a counted warning.
  virtual EventTrace read(const simdjson::dom::element& document,
                          const std::string& file_label) const = 0;
};

/// The trace readers of a build, by name, tried in registration order. Not thread-safe to fill;
/// reading from a filled registry is.
class TraceReaderRegistry {
 public:
  /// Adds `reader`; throws InternalError for a duplicate name.
  void add(std::unique_ptr<TraceReader> reader);
  /// Names in registration order.
  std::vector<std::string> names() const;
  /// Parses `text` and reads it with the first reader that recognizes it. Throws InvalidInput
  /// naming `file_label` for unparsable JSON or a format no reader recognizes.
  EventTrace read_text(const std::string& text, const std::string& file_label) const;
  /// `read_text` on a file's contents; throws InvalidInput when it cannot be read.
  EventTrace read_file(const std::filesystem::path& path) const;
  /// `read_text` on text already in simdjson's padded buffer.
  EventTrace read_padded(const simdjson::padded_string& text, const std::string& file_label) const;

 private:
  std::vector<std::unique_ptr<TraceReader>> readers_;
};

/// Fills `registry` with the standard readers: "tf-timeline" (TF1 timelines: epoch µs, scoped
/// names in args.name, devices from process_name metadata) and "chrome" (Kineto traces, objects
/// with "traceEvents" and "baseTimeNanoseconds", and torch 1.13's bare arrays of X events).
void register_standard_trace_readers(TraceReaderRegistry& registry);

/// Reader for Chrome/Kineto traces and torch 1.13's bare arrays.
std::unique_ptr<TraceReader> make_chrome_trace_reader();
/// Reader for TensorFlow 1 timelines (tensorflow.python.client.timeline).
std::unique_ptr<TraceReader> make_tf_timeline_reader();

}  // namespace nnergy::account
