// Streaming the event array of a Chrome-trace-format file. Written by hand because simdjson (DOM
// and On Demand alike) indexes a whole document at once: for a trace of a million events that is
// several times the file's size in memory. Here only the array's boundaries are tracked (nesting,
// strings and their escapes), and simdjson parses each batch of whole elements.
#include "nnergy/account/trace_stream.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "nnergy/core/error.h"

namespace nnergy::account {
namespace {

// 64 KiB reads: few enough calls for a large file, and a small trace allocates little.
constexpr std::size_t kReadBlock = std::size_t{1} << 16;

std::string describe(int c) {
  if (c < 0) return "the end of the file";
  if (c >= 0x20 && c < 0x7f) return fmt::format("'{}'", static_cast<char>(c));
  return fmt::format("byte 0x{:02x}", c);
}

bool is_space(int c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

#if defined(__SSE2__)
// Bit i of the result set where byte i of the 16 is one of `Cs`.
template <char... Cs>
std::uint32_t matches(const __m128i bytes) {
  const __m128i hits = (_mm_cmpeq_epi8(bytes, _mm_set1_epi8(Cs)) | ...);
  return static_cast<std::uint32_t>(_mm_movemask_epi8(hits));
}
#endif

// The first byte of [p, end) that is one of `Cs`, or end. Tracking the array's boundaries visits
// every byte of the file, so the bytes between the ones that matter (inside strings: a quote or a
// backslash; inside containers: a quote or a bracket) are skipped 16 at a time where SSE2 is there.
template <char... Cs>
const char* find_first_of(const char* p, const char* end) {
#if defined(__SSE2__)
  while (end - p >= 16) {
    const std::uint32_t mask = matches<Cs...>(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
    if (mask != 0) return p + __builtin_ctz(mask);
    p += 16;
  }
#endif
  while (p < end && ((*p != Cs) && ...)) ++p;
  return p;
}

#if defined(__SSE2__)
// 64 bytes of text as bit masks: bit i set where byte i is one of the asked bytes.
class Chunk {
 public:
  explicit Chunk(const char* p) {
    for (int k = 0; k < 4; ++k)
      lanes_[k] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * k));
  }
  template <char... Cs>
  std::uint64_t mask() const {
    std::uint64_t m = 0;
    for (int k = 0; k < 4; ++k) m |= std::uint64_t{matches<Cs...>(lanes_[k])} << (16 * k);
    return m;
  }

 private:
  __m128i lanes_[4];
};

// Follows 64 bytes at p inside a container (depth > 0), whether they start inside a string
// carried in and out, as the byte loop would: the parity of the quotes before a byte says
// whether it is inside a string, and only brackets outside strings change the depth. Returns the
// offset just past the bracket that closes the container, 64 when it stays open, or -1 when the
// chunk holds a backslash (escapes are left to the byte loop).
int scan_chunk(const char* p, int& depth, bool& in_string) {
  const Chunk chunk(p);
  if (chunk.mask<'\\'>() != 0) return -1;
  std::uint64_t inside = chunk.mask<'"'>();  // becomes the prefix parity of the quotes
  for (int shift = 1; shift < 64; shift *= 2) inside ^= inside << shift;
  if (in_string) inside = ~inside;
  const std::uint64_t open = chunk.mask<'{', '['>() & ~inside;
  std::uint64_t brackets = (open | chunk.mask<'}', ']'>()) & ~inside;
  while (brackets != 0) {
    const int i = __builtin_ctzll(brackets);
    if ((open >> i) & 1) {
      ++depth;
    } else if (--depth == 0) {
      in_string = false;
      return i + 1;
    }
    brackets &= brackets - 1;
  }
  in_string = (inside >> 63) != 0;
  return 64;
}
#endif

// The bytes of a source, a block at a time, with the offset of the current byte for messages.
class Scanner {
 public:
  Scanner(const ByteSource& source, const std::string& file_label)
      : source_(source), label_(file_label), block_(new char[kReadBlock]) {}

  // The current byte, or -1 at the end of the input.
  int peek() {
    if (pos_ == size_ && !refill()) return -1;
    return static_cast<unsigned char>(block_[pos_]);
  }
  void advance() { ++pos_; }
  std::size_t offset() const { return consumed_ + pos_; }

  void skip_whitespace() {
    for (;;) {
      const int c = peek();
      if (!is_space(c)) return;
      ++pos_;
    }
  }

  // A UTF-8 byte order mark at the very start.
  void skip_byte_order_mark() {
    if (peek() != 0xEF) return;
    if (size_ - pos_ >= 3 && std::memcmp(block_.get() + pos_, "\xEF\xBB\xBF", 3) == 0) pos_ += 3;
  }

  // After an element of an array or a member of an object: true at ',' (another follows),
  // false at `close` (the container ends); both consumed. Anything else fails naming `after()`
  // (called only then: this runs once per event).
  template <typename After>
  bool next_or_close(char close, const After& after) {
    skip_whitespace();
    const int c = peek();
    if (c == ',' || c == close) {
      ++pos_;
      return c == ',';
    }
    fail(fmt::format("',' or '{}' after {}", close, after()), c);
  }

  [[noreturn]] void fail(const std::string& expected, int found) const {
    throw InvalidInput(fmt::format("{}: byte {}: expected {}, found {}", label_, offset(), expected,
                                   describe(found)));
  }

  // Appends the raw text of the JSON value that starts here (after whitespace) to `out`: a
  // string, a container with everything inside it, or a scalar up to its delimiter.
  // `what()` names the value in messages (called only then: this runs once per event).
  template <typename What>
  void scan_value(std::string& out, const What& what) {
    skip_whitespace();
    const int first = peek();
    if (first < 0 || first == ',' || first == ']' || first == '}' || first == ':') {
      fail(what(), first);
    }
    int depth = 0;
    bool in_string = false;
    bool escape = false;
    std::size_t start = pos_;
    std::size_t bytewise_until = 0;  // after a chunk with a backslash: the byte loop up to here
    for (;;) {
      if (pos_ == size_) {
        out.append(block_.get() + start, pos_ - start);
        if (!refill()) {
          if (in_string || depth > 0) {
            fail(fmt::format("the rest of {} (the file ends inside it)", what()), -1);
          }
          return;  // a scalar ending the input
        }
        start = 0;
        bytewise_until = 0;
        continue;
      }
      const char* data = block_.get();
#if defined(__SSE2__)
      if (depth > 0 && !escape && pos_ >= bytewise_until && size_ - pos_ >= 64) {
        const int scanned = scan_chunk(data + pos_, depth, in_string);
        if (scanned < 0) {
          bytewise_until = pos_ + 64;
        } else {
          pos_ += static_cast<std::size_t>(scanned);
          if (depth == 0) break;
          continue;
        }
      }
#endif
      if (in_string) {
        if (escape) {
          escape = false;
          ++pos_;
          continue;
        }
        pos_ = static_cast<std::size_t>(find_first_of<'"', '\\'>(data + pos_, data + size_) - data);
        if (pos_ == size_) continue;
        if (data[pos_] == '\\') {
          escape = true;
          ++pos_;
          continue;
        }
        in_string = false;
        ++pos_;
        if (depth == 0) break;
        continue;
      }
      if (depth > 0) {
        // Inside a container only strings and brackets change what follows.
        pos_ = static_cast<std::size_t>(
            find_first_of<'"', '{', '}', '[', ']'>(data + pos_, data + size_) - data);
        if (pos_ == size_) continue;
      }
      const char c = data[pos_];
      if (c == '"') {
        in_string = true;
      } else if (c == '{' || c == '[') {
        ++depth;
      } else if (c == '}' || c == ']') {
        if (depth == 0) break;
        if (--depth == 0) {
          ++pos_;
          break;
        }
      } else if (depth == 0 && (c == ',' || c == ':' || is_space(c))) {
        break;
      }
      ++pos_;
    }
    out.append(block_.get() + start, pos_ - start);
  }

 private:
  bool refill() {
    consumed_ += size_;
    pos_ = 0;
    size_ = source_(block_.get(), kReadBlock);
    return size_ > 0;
  }

  const ByteSource& source_;
  const std::string& label_;
  std::unique_ptr<char[]> block_;
  std::size_t size_ = 0;
  std::size_t pos_ = 0;
  std::size_t consumed_ = 0;
};

// Collects whole elements of the event array as "[e1,e2,...]" and hands each batch, parsed, on.
class Batcher {
 public:
  Batcher(const std::string& file_label, const EventBatchHandler& on_batch, std::size_t batch_bytes,
          TraceShape& shape)
      : label_(file_label), on_batch_(on_batch), batch_bytes_(batch_bytes), shape_(shape) {
    // Grown as batches need it, and kept across batches.
    text_.reserve(std::min(batch_bytes, kReadBlock) + simdjson::SIMDJSON_PADDING);
    text_ = "[";
  }

  void add(Scanner& scanner) {
    if (count_ > 0) text_ += ',';
    scanner.scan_value(text_,
                       [&] { return fmt::format("event {} (a JSON value)", first_ + count_); });
    ++count_;
    if (text_.size() >= batch_bytes_) flush(scanner.offset());
  }

  // `offset`: the bytes read up to the batch's end.
  void flush(std::size_t offset) {
    if (count_ == 0) return;
    shape_.bytes_read = offset;
    text_ += ']';
    simdjson::dom::element document;
    if (const auto error = parser_.parse(text_).get(document); error != simdjson::SUCCESS) {
      throw InvalidInput(
          fmt::format("{}: expected JSON events, found unparsable JSON in events {} to {}: {}",
                      label_, first_, first_ + count_ - 1, simdjson::error_message(error)));
    }
    on_batch_(shape_, document.get_array().value_unsafe(), first_);
    first_ += count_;
    count_ = 0;
    text_.assign("[");
  }

  std::size_t total() const { return first_ + count_; }

 private:
  const std::string& label_;
  const EventBatchHandler& on_batch_;
  std::size_t batch_bytes_;
  TraceShape& shape_;
  simdjson::dom::parser parser_;
  std::string text_;
  std::size_t first_ = 0;  // index of the batch's first element
  std::size_t count_ = 0;  // elements in the batch
};

void stream_elements(Scanner& scanner, Batcher& batcher) {
  scanner.skip_whitespace();
  if (scanner.peek() == ']') {
    scanner.advance();
    return;
  }
  do {
    batcher.add(scanner);
  } while (
      scanner.next_or_close(']', [&] { return fmt::format("event {}", batcher.total() - 1); }));
  batcher.flush(scanner.offset());
}

std::string member_name(const std::string& raw, const std::string& file_label) {
  if (raw.find('\\') == std::string::npos) return raw.substr(1, raw.size() - 2);
  simdjson::dom::parser parser;
  std::string_view name;
  if (parser.parse(raw).get_string().get(name) != simdjson::SUCCESS) {
    throw InvalidInput(file_label + ": expected a member name (a JSON string), found " + raw);
  }
  return std::string(name);
}

}  // namespace

std::optional<double> TraceMembers::number(std::string_view key) const {
  for (const auto& [name, text] : raw) {
    if (name != key) continue;
    simdjson::dom::parser parser;
    double value = 0;
    if (parser.parse(text).get_double().get(value) == simdjson::SUCCESS) return value;
    return std::nullopt;
  }
  return std::nullopt;
}

TraceShape stream_trace_events(const ByteSource& source, const std::string& file_label,
                               const EventBatchHandler& on_batch, std::size_t batch_bytes) {
  TraceShape shape;
  Scanner scanner(source, file_label);
  Batcher batcher(file_label, on_batch, batch_bytes, shape);
  scanner.skip_byte_order_mark();
  scanner.skip_whitespace();
  const int first = scanner.peek();
  if (first == '[') {
    shape.bare_array = true;
    shape.has_event_array = true;
    scanner.advance();
    stream_elements(scanner, batcher);
  } else if (first == '{') {
    scanner.advance();
    scanner.skip_whitespace();
    if (scanner.peek() == '}') {
      scanner.advance();
    } else {
      for (;;) {
        scanner.skip_whitespace();
        if (scanner.peek() != '"') scanner.fail("a member name (a string)", scanner.peek());
        std::string raw_name;
        scanner.scan_value(raw_name, [] { return std::string("a member name"); });
        const std::string name = member_name(raw_name, file_label);
        scanner.skip_whitespace();
        if (scanner.peek() != ':') scanner.fail("':' after \"" + name + "\"", scanner.peek());
        scanner.advance();
        scanner.skip_whitespace();
        if (name == "traceEvents" && !shape.has_event_array && scanner.peek() == '[') {
          shape.has_event_array = true;
          scanner.advance();
          stream_elements(scanner, batcher);
        } else {
          std::string value;
          scanner.scan_value(value, [&] { return "the value of \"" + name + "\""; });
          shape.members.raw.emplace_back(name, std::move(value));
        }
        if (!scanner.next_or_close('}', [&] { return "\"" + name + "\""; })) break;
      }
    }
  } else {
    throw InvalidInput(file_label +
                       ": expected a JSON program trace (an array of events or an object with "
                       "\"traceEvents\"), found " +
                       describe(first));
  }
  scanner.skip_whitespace();
  if (scanner.peek() >= 0) scanner.fail("the end of the file after the trace", scanner.peek());
  shape.event_count = batcher.total();
  shape.bytes_read = scanner.offset();
  // The other members are kept as text: check that each is JSON, as a whole-document parse would.
  simdjson::dom::parser parser;
  for (const auto& [name, text] : shape.members.raw) {
    simdjson::dom::element value;
    if (const auto error = parser.parse(text).get(value); error != simdjson::SUCCESS) {
      throw InvalidInput(fmt::format("{}: member \"{}\": expected JSON, found unparsable JSON: {}",
                                     file_label, name, simdjson::error_message(error)));
    }
  }
  return shape;
}

ByteSource text_source(std::string_view text) {
  return [text, offset = std::size_t{0}](char* buffer, std::size_t capacity) mutable {
    const std::size_t n = std::min(capacity, text.size() - offset);
    std::memcpy(buffer, text.data() + offset, n);
    offset += n;
    return n;
  };
}

}  // namespace nnergy::account
