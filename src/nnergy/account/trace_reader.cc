#include "nnergy/account/trace_reader.h"

#include <algorithm>
#include <cstdio>

#include "nnergy/core/error.h"
#include "nnergy/core/huge_pages.h"

namespace nnergy::account {

void TraceReaderRegistry::add(std::unique_ptr<TraceReader> reader) {
  std::string name = reader->name();
  Registry::add(std::move(name), "", std::move(reader));
}

EventTrace TraceReaderRegistry::read_stream(const ByteSource& source, const std::string& file_label,
                                            std::optional<std::size_t> total_bytes) const {
  std::unique_ptr<TraceReading> reading;
  const auto choose = [&](const TraceShape& shape, const simdjson::dom::array* first_events) {
    for (const Entry& entry : entries()) {
      if (entry.value->recognizes(shape, first_events)) {
        reading = entry.value->start(shape, file_label);
        return;
      }
    }
    throw InvalidInput(file_label +
                       ": expected a program trace (a JSON array of events or an object with "
                       "\"traceEvents\"), found JSON no reader recognizes; readers: " +
                       join_with_commas(names()));
  };
  const TraceShape shape = stream_trace_events(
      source, file_label,
      [&](const TraceShape& so_far, const simdjson::dom::array& events, std::size_t first) {
        const bool first_batch = !reading;
        if (first_batch) choose(so_far, &events);
        std::size_t index = first;
        for (const simdjson::dom::element event : events) reading->add(event, index++);
        if (first_batch && total_bytes && *total_bytes > 0 && so_far.bytes_read > 0) {
          reading->reserve_for_share(std::min(
              1.0, static_cast<double>(so_far.bytes_read) / static_cast<double>(*total_bytes)));
        }
      });
  if (!reading) choose(shape, nullptr);
  return reading->finish(shape);
}

EventTrace TraceReaderRegistry::read_text(std::string_view text,
                                          const std::string& file_label) const {
  return read_stream(text_source(text), file_label, text.size());
}

EventTrace TraceReaderRegistry::read_file(const std::filesystem::path& path) const {
  const std::string label = path.string();
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::fopen(label.c_str(), "rb"),
                                                       &std::fclose);
  if (!file || std::filesystem::is_directory(path)) {
    throw InvalidInput(label + ": cannot open the program trace for reading");
  }
  std::error_code error;
  const std::uintmax_t bytes = std::filesystem::file_size(path, error);
  const std::optional<std::size_t> size =
      error ? std::nullopt : std::optional<std::size_t>(static_cast<std::size_t>(bytes));
  return read_stream(
      [&](char* buffer, std::size_t capacity) {
        const std::size_t n = std::fread(buffer, 1, capacity, file.get());
        if (n == 0 && std::ferror(file.get())) {
          throw InvalidInput(label + ": cannot read the program trace (I/O error)");
        }
        return n;
      },
      label, size);
}

void reserve_events_for_share(std::vector<TraceEvent>& events, double share_read) {
  if (!(share_read > 0)) return;
  const double expected = static_cast<double>(events.size()) / share_read * 1.02 + 16;
  // At most a billion events: a tiny first share of a huge file must not reserve absurdly.
  events.reserve(static_cast<std::size_t>(std::min(expected, 1e9)));
  advise_huge_pages(events.data(), events.capacity() * sizeof(TraceEvent));
}

void register_standard_trace_readers(TraceReaderRegistry& registry) {
  // TF timelines are Chrome traces too: the more specific reader goes first.
  registry.add(make_tf_timeline_reader());
  registry.add(make_chrome_trace_reader());
}

}  // namespace nnergy::account
