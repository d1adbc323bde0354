// Streaming a trace's event array in batches: every batch and read-block boundary gives the same
// events as one batch; members after the array count; malformed JSON is named, never skipped.
#include "nnergy/account/trace_stream.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "nnergy/account/trace_reader.h"
#include "nnergy/core/error.h"

namespace nnergy::account {
namespace {

using ::testing::HasSubstr;

// Names with escaped quotes, brackets, braces and commas inside strings, nested args, a string
// ending in an escaped backslash, and the base time written after the events (as Kineto does).
constexpr const char* kTricky = R"json({"schemaVersion": 1,
  "traceEvents": [
    {"ph": "X", "cat": "cpu_op", "name": "aten::a\"]},{[", "pid": 1, "tid": 1, "ts": 10, "dur": 5,
     "args": {"External id": 1, "nested": {"x": [1, {"y": "]"}]}, "module": "m\\"}},
    {"ph": "X", "cat": "cpu_op", "name": "b\u00e9\\", "pid": 1, "tid": 1, "ts": 20, "dur": 5},
    {"ph": "M", "name": "thread_name", "pid": 1, "tid": 1, "args": {"name": "main, \"thread\""}},
    {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 30, "dur": 5,
     "args": {"device": 0, "correlation": 3}}
  ],
  "traceName": "x", "baseTimeNanoseconds": 1700000000000000000}
)json";

// A source that hands out `step` bytes at a time.
ByteSource drip(const std::string& text, std::size_t step) {
  return [&text, step, offset = std::size_t{0}](char* buffer, std::size_t capacity) mutable {
    const std::size_t n = std::min({step, capacity, text.size() - offset});
    std::memcpy(buffer, text.data() + offset, n);
    offset += n;
    return n;
  };
}

std::vector<std::string> names_streamed(const std::string& text, std::size_t step,
                                        std::size_t batch_bytes, TraceShape* shape_out) {
  std::vector<std::string> names;
  std::vector<std::size_t> indices;
  const TraceShape shape = stream_trace_events(
      drip(text, step), "t.json",
      [&](const TraceShape&, const simdjson::dom::array& events, std::size_t first) {
        std::size_t i = first;
        for (const simdjson::dom::element e : events) {
          std::string_view name;
          EXPECT_EQ(e["name"].get_string().get(name), simdjson::SUCCESS);
          names.emplace_back(name);
          indices.push_back(i++);
        }
      },
      batch_bytes);
  for (std::size_t i = 0; i < indices.size(); ++i) EXPECT_EQ(indices[i], i);
  if (shape_out != nullptr) *shape_out = shape;
  return names;
}

TEST(TraceStream, EveryBatchAndBlockBoundaryGivesTheSameEvents) {
  const std::string text = kTricky;
  TraceShape whole;
  const std::vector<std::string> expected = names_streamed(text, text.size(), 1 << 20, &whole);
  ASSERT_EQ(expected.size(), 4u);
  EXPECT_EQ(expected[0], "aten::a\"]},{[");
  EXPECT_EQ(expected[1], "b\xc3\xa9\\");
  EXPECT_EQ(whole.event_count, 4u);
  EXPECT_FALSE(whole.bare_array);
  EXPECT_TRUE(whole.has_event_array);
  ASSERT_TRUE(whole.members.number("baseTimeNanoseconds").has_value());
  EXPECT_DOUBLE_EQ(*whole.members.number("baseTimeNanoseconds"), 1.7e18);
  EXPECT_FALSE(whole.members.number("traceName").has_value());  // a string, not a number
  for (std::size_t step : {1u, 2u, 3u, 7u, 64u}) {
    for (std::size_t batch : {1u, 50u, 200u}) {
      SCOPED_TRACE("step " + std::to_string(step) + ", batch " + std::to_string(batch));
      EXPECT_EQ(names_streamed(text, step, batch, nullptr), expected);
    }
  }
}

// The array's boundaries are followed 64 bytes at a time where no backslash is near: brackets
// and quotes inside strings, strings that run across those 64-byte steps, and escapes next to
// them, at every offset, give the names they hold.
TEST(TraceStream, BracketsAndQuotesInsideStringsAtEveryOffset) {
  std::string text = R"({"traceEvents": [)";
  std::vector<std::string> expected;
  for (int offset = 0; offset < 140; ++offset) {
    const std::string pad(static_cast<std::size_t>(offset), 'x');
    // Escaped (JSON text) and decoded forms: every third name holds escapes, the rest only
    // brackets and braces, some long enough to span two steps.
    std::string json_name = pad + "]}{[" + pad + "}]";
    std::string name = json_name;
    if (offset % 3 == 0) {
      json_name = pad + R"(\"]}\\)" + pad;
      name = pad + "\"]}\\" + pad;
    }
    if (offset > 0) text += ",";
    text += R"({"ph": "X", "name": ")" + json_name +
            R"(", "args": {"a": [1, {"b": "[{"}], "c": ")" + pad + R"("}})";
    expected.push_back(name);
  }
  text += "]}";
  for (std::size_t step : {text.size(), std::size_t{100}, std::size_t{64}, std::size_t{65}}) {
    SCOPED_TRACE("step " + std::to_string(step));
    EXPECT_EQ(names_streamed(text, step, 1 << 20, nullptr), expected);
    EXPECT_EQ(names_streamed(text, step, 300, nullptr), expected);
  }
}

TEST(TraceStream, KinetoBaseTimeAfterTheEventsIsTheTraceEpoch) {
  TraceReaderRegistry readers;
  register_standard_trace_readers(readers);
  const EventTrace trace = readers.read_text(kTricky, "t.json");
  ASSERT_TRUE(trace.epoch_offset_s.has_value());
  EXPECT_DOUBLE_EQ(*trace.epoch_offset_s, 1.7e9);
  ASSERT_EQ(trace.events.size(), 3u);
  EXPECT_EQ(trace.events[0].module, "m\\");
  EXPECT_EQ(trace.events[2].device, "gpu:0");
}

TEST(TraceStream, TfProcessNamesAfterTheirEventsStillNameTheDevice) {
  const std::string text = R"json({"traceEvents": [
    {"name": "process_name", "ph": "M", "pid": 0, "args": {"name": "/job:localhost/replica:0/task:0/device:CPU:0 Compute"}},
    {"ph": "X", "cat": "Op", "name": "MatMul", "pid": 3, "tid": 0, "ts": 1e15, "dur": 4, "args": {"name": "m/MatMul", "op": "MatMul"}},
    {"name": "process_name", "ph": "M", "pid": 3, "args": {"name": "/device:GPU:1/stream:all Compute"}}
  ]})json";
  TraceReaderRegistry readers;
  register_standard_trace_readers(readers);
  const EventTrace trace = readers.read_text(text, "tf.json");
  EXPECT_EQ(trace.format, "tf-timeline");
  ASSERT_EQ(trace.events.size(), 1u);
  EXPECT_EQ(trace.events[0].device, "gpu:1");
  EXPECT_EQ(trace.events[0].qualified_name, "m/MatMul");
  EXPECT_TRUE(trace.events[0].named_by_trace);
}

void expect_invalid(const std::string& text, const std::string& part) {
  TraceReaderRegistry readers;
  register_standard_trace_readers(readers);
  SCOPED_TRACE(text);
  for (std::size_t step : {1u, 4096u}) {
    try {
      readers.read_stream(drip(text, step), "bad.json");
      ADD_FAILURE() << "no error for: " << text;
    } catch (const InvalidInput& e) {
      EXPECT_THAT(e.what(), HasSubstr("bad.json"));
      EXPECT_THAT(e.what(), HasSubstr(part));
    }
  }
}

TEST(TraceStream, MalformedJsonIsNamedWhereverItIs) {
  const std::string event = R"({"ph": "X", "name": "a", "ts": 1, "dur": 1})";
  // Truncated inside a string, an event, the array, the object.
  expect_invalid(R"({"traceEvents": [{"ph": "X", "name": "a)", "the file ends inside it");
  expect_invalid(R"({"traceEvents": [)" + event + R"(, {"ph": "X")", "the file ends inside it");
  expect_invalid(R"({"traceEvents": [)" + event, "expected ',' or ']' after event 0");
  expect_invalid(R"({"traceEvents": [)" + event + "]", "expected ',' or '}'");
  // A trailing comma, a missing comma, a bad value inside an event, text after the trace.
  expect_invalid("[" + event + ",]", "expected event 1");
  expect_invalid("[" + event + " " + event + "]", "expected ',' or ']' after event 0");
  expect_invalid("[" + event + R"(, {"ph": "X", "name": tru, "ts": 1, "dur": 1}])",
                 "unparsable JSON in events 0 to 1");
  expect_invalid("[" + event + "] []", "expected the end of the file");
  // Members: an unparsable one, a name that is not a string, a missing colon.
  expect_invalid(R"({"traceEvents": [], "x": [1,]})", "member \"x\"");
  expect_invalid(R"({"traceEvents": [], 3: 4})", "expected a member name");
  expect_invalid(R"({"traceEvents" [])", "expected ':' after \"traceEvents\"");
  // Neither an array nor an object; no event array at all.
  expect_invalid("42", "expected a JSON program trace");
  expect_invalid("", "found the end of the file");
  expect_invalid(R"({"events": []})", "no reader recognizes");
  expect_invalid(R"({"traceEvents": {"a": 1}})", "no reader recognizes");
}

TEST(TraceStream, EmptyAndByteOrderMarkedTracesRead) {
  TraceReaderRegistry readers;
  register_standard_trace_readers(readers);
  EXPECT_TRUE(readers.read_text("[]", "e.json").events.empty());
  EXPECT_TRUE(readers.read_text(R"({"traceEvents": [ ]})", "e.json").events.empty());
  const EventTrace trace = readers.read_text(
      "\xEF\xBB\xBF [{\"ph\":\"X\",\"name\":\"a\",\"ts\":1,\"dur\":2}]\n", "bom.json");
  ASSERT_EQ(trace.events.size(), 1u);
  EXPECT_EQ(trace.format, "torch-legacy");
}

}  // namespace
}  // namespace nnergy::account
