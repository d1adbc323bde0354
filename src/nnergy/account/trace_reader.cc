#include "nnergy/account/trace_reader.h"

#include "nnergy/core/error.h"

namespace nnergy::account {

void TraceReaderRegistry::add(std::unique_ptr<TraceReader> reader) {
  for (const auto& existing : readers_) {
    if (existing->name() == reader->name()) {
      throw InternalError("trace reader '" + reader->name() + "' registered twice");
    }
  }
  readers_.push_back(std::move(reader));
}

std::vector<std::string> TraceReaderRegistry::names() const {
  std::vector<std::string> result;
  for (const auto& reader : readers_) result.push_back(reader->name());
  return result;
}

EventTrace TraceReaderRegistry::read_padded(const simdjson::padded_string& text,
                                            const std::string& file_label) const {
  simdjson::dom::parser parser;
  simdjson::dom::element document;
  if (const auto error = parser.parse(text).get(document); error != simdjson::SUCCESS) {
    throw InvalidInput(file_label +
                       ": expected a JSON program trace (Chrome/Kineto, torch, TF "
                       "timeline), found unparsable JSON: " +
                       simdjson::error_message(error));
  }
  for (const auto& reader : readers_) {
    if (reader->recognizes(document)) return reader->read(document, file_label);
  }
  throw InvalidInput(file_label +
                     ": expected a program trace (a JSON array of events or an object with "
                     "\"traceEvents\"), found JSON no reader recognizes; readers: " +
                     join_with_commas(names()));
}

EventTrace TraceReaderRegistry::read_text(const std::string& text,
                                          const std::string& file_label) const {
  return read_padded(simdjson::padded_string(text), file_label);
}

EventTrace TraceReaderRegistry::read_file(const std::filesystem::path& path) const {
  // Loaded straight into simdjson's padded buffer: one copy of a possibly large file.
  simdjson::padded_string text;
  if (simdjson::padded_string::load(path.string()).get(text) != simdjson::SUCCESS) {
    throw InvalidInput(path.string() + ": cannot open the program trace for reading");
  }
  return read_padded(text, path.string());
}

void register_standard_trace_readers(TraceReaderRegistry& registry) {
  // TF timelines are Chrome traces too: the more specific reader goes first.
  registry.add(make_tf_timeline_reader());
  registry.add(make_chrome_trace_reader());
}

}  // namespace nnergy::account
