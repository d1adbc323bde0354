// Trace readers and the hierarchy: Kineto, torch 1.13 bare arrays, TF1 timelines, bad input.
#include "nnergy/account/trace_reader.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "nnergy/account/hierarchy.h"
#include "nnergy/core/error.h"

namespace nnergy::account {
namespace {

using ::testing::HasSubstr;

TraceReaderRegistry standard_readers() {
  TraceReaderRegistry registry;
  register_standard_trace_readers(registry);
  return registry;
}

const TraceEvent& find(const EventTrace& trace, const std::string& name) {
  for (const TraceEvent& e : trace.events) {
    if (e.name == name) return e;
  }
  throw std::runtime_error("no event " + name);
}

// A Kineto trace: a module range, a CPU op launching a kernel through cudaLaunchKernel, and the
// kernel on GPU 0 linked by External id and correlation.
constexpr const char* kKineto = R"json({
  "schemaVersion": 1, "baseTimeNanoseconds": 1700000000000000000,
  "traceEvents": [
    {"ph": "X", "cat": "Trace", "name": "PyTorch Profiler (0)", "pid": 1, "tid": 1, "ts": 0, "dur": 1000},
    {"ph": "X", "cat": "user_annotation", "name": "module::Net.fc", "pid": 1, "tid": 7, "ts": 10, "dur": 100},
    {"ph": "X", "cat": "cpu_op", "name": "aten::addmm", "pid": 1, "tid": 7, "ts": 20, "dur": 50,
     "args": {"External id": 5, "Sequence number": 3}},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 7, "ts": 30, "dur": 5,
     "args": {"External id": 5, "correlation": 99}},
    {"ph": "X", "cat": "kernel", "name": "sgemm_kernel", "pid": 0, "tid": 7, "ts": 40, "dur": 200,
     "args": {"External id": 5, "correlation": 99, "device": 0}},
    {"ph": "X", "cat": "cpu_op", "name": "autograd::engine::evaluate_function: AddmmBackward0", "pid": 1, "tid": 8, "ts": 300, "dur": 80,
     "args": {"Sequence number": 3}},
    {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 8, "ts": 310, "dur": 30},
    {"ph": "i", "name": "instant", "pid": 1, "tid": 7, "ts": 5}
  ]})json";

TEST(ChromeTraceReader, ReadsKinetoWithBaseTimeDevicesAndLinks) {
  EventTrace trace = standard_readers().read_text(kKineto, "kineto.json");
  EXPECT_EQ(trace.format, "chrome");
  ASSERT_TRUE(trace.epoch_offset_s.has_value());
  EXPECT_DOUBLE_EQ(*trace.epoch_offset_s, 1.7e9);
  EXPECT_EQ(trace.events.size(), 6u);  // the Trace span and the instant event are not work
  const TraceEvent& kernel = find(trace, "sgemm_kernel");
  EXPECT_EQ(kernel.device, "gpu:0");
  EXPECT_DOUBLE_EQ(kernel.start_s, 40e-6);
  EXPECT_DOUBLE_EQ(kernel.duration_s, 200e-6);

  resolve_hierarchy(trace);
  EXPECT_EQ(find(trace, "aten::addmm").qualified_name, "Net.fc/aten::addmm");
  EXPECT_EQ(find(trace, "aten::addmm").pass, Pass::kForward);
  // The kernel takes the name of the op that launched it.
  EXPECT_EQ(find(trace, "sgemm_kernel").qualified_name, "Net.fc/aten::addmm");
  EXPECT_EQ(find(trace, "sgemm_kernel").pass, Pass::kForward);
  // Backward ops join the module of the forward op with the same sequence number.
  EXPECT_EQ(find(trace, "aten::mm").qualified_name, "Net.fc/aten::mm");
  EXPECT_EQ(find(trace, "aten::mm").pass, Pass::kBackward);
  EXPECT_EQ(find(trace, "module::Net.fc").qualified_name, "Net.fc/(self)");
}

TEST(ChromeTraceReader, ReadsTorch113BareArraysWithoutTimeBase) {
  const char* text = R"([
    {"name": "module::M", "ph": "X", "ts": 100, "dur": 50, "tid": 1, "pid": "CPU functions", "args": {}},
    {"name": "aten::relu", "ph": "X", "ts": 110, "dur": 10, "tid": 1, "pid": "CPU functions", "args": {}},
    {"name": "nnergy::marker", "ph": "X", "ts": 1, "dur": 1, "tid": 1, "pid": "CPU functions", "args": {}}
  ])";
  EventTrace trace = standard_readers().read_text(text, "legacy.json");
  EXPECT_EQ(trace.format, "torch-legacy");
  EXPECT_FALSE(trace.epoch_offset_s.has_value());
  ASSERT_EQ(trace.events.size(), 2u);  // the marker is not work
  resolve_hierarchy(trace);
  EXPECT_EQ(find(trace, "aten::relu").qualified_name, "M/aten::relu");
  EXPECT_EQ(find(trace, "aten::relu").device, "cpu");
}

TEST(TfTimelineReader, ReadsScopedNamesEpochTimesAndDevices) {
  const char* text = R"({"traceEvents": [
    {"ph": "M", "name": "process_name", "pid": 0, "args": {"name": "/job:localhost/replica:0/task:0/device:GPU:0 Compute"}},
    {"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "/job:localhost/replica:0/task:0/device:CPU:0 Compute"}},
    {"ph": "X", "cat": "Op", "name": "MatMul", "pid": 0, "tid": 0, "ts": 1600000000000000, "dur": 20,
     "args": {"name": "bert/encoder/layer_0/attention/self/MatMul", "op": "MatMul"}},
    {"ph": "X", "cat": "Op", "name": "MatMulGrad", "pid": 1, "tid": 0, "ts": 1600000000000030, "dur": 10,
     "args": {"name": "gradients/bert/encoder/layer_0/attention/self/MatMul_grad/MatMul", "op": "MatMul"}}
  ]})";
  EventTrace trace = standard_readers().read_text(text, "timeline.json");
  EXPECT_EQ(trace.format, "tf-timeline");
  ASSERT_TRUE(trace.epoch_offset_s.has_value());
  EXPECT_EQ(*trace.epoch_offset_s, 0.0);
  ASSERT_EQ(trace.events.size(), 2u);
  resolve_hierarchy(trace);
  EXPECT_EQ(trace.events[0].device, "gpu:0");
  EXPECT_EQ(trace.events[0].qualified_name, "bert/encoder/layer_0/attention/self/MatMul");
  EXPECT_EQ(trace.events[0].pass, Pass::kForward);
  EXPECT_NEAR(trace.events[0].start_s, 1.6e9, 1e-6);
  EXPECT_EQ(trace.events[1].device, "cpu");
  EXPECT_EQ(trace.events[1].pass, Pass::kBackward);
}

TEST(TraceReaderBadInput, MissingFieldNamesTheEventAndField) {
  const char* text =
      R"([{"name": "a", "ph": "X", "ts": 1, "dur": 1}, {"name": "b", "ph": "X", "dur": 1}])";
  try {
    standard_readers().read_text(text, "bad.json");
    FAIL() << "no exception";
  } catch (const InvalidInput& e) {
    EXPECT_THAT(e.what(), HasSubstr("bad.json: event 1"));
    EXPECT_THAT(e.what(), HasSubstr("\"ts\""));
  }
}

TEST(TraceReaderBadInput, MistypedFieldSaysWhatWasFound) {
  const char* text = R"([{"name": "a", "ph": "X", "ts": 1, "dur": [1]}])";
  try {
    standard_readers().read_text(text, "bad.json");
    FAIL() << "no exception";
  } catch (const InvalidInput& e) {
    EXPECT_THAT(e.what(), HasSubstr("\"dur\""));
    EXPECT_THAT(e.what(), HasSubstr("found an array"));
  }
}

TEST(TraceReaderBadInput, NegativeDurationsAreDroppedAndCounted) {
  const char* text = R"([{"name": "a", "ph": "X", "ts": 1, "dur": -5},
                         {"name": "b", "ph": "X", "ts": 1, "dur": 5},
                         {"name": "c", "ph": "X", "ts": 9, "dur": -1}])";
  const EventTrace trace = standard_readers().read_text(text, "neg.json");
  EXPECT_EQ(trace.events.size(), 1u);
  ASSERT_EQ(trace.warnings.size(), 1u);
  EXPECT_THAT(trace.warnings[0], HasSubstr("2 events with a negative"));
}

TEST(TraceReaderBadInput, UnparsableAndUnrecognizedJsonAreInvalidInput) {
  EXPECT_THROW(standard_readers().read_text("{not json", "x.json"), InvalidInput);
  EXPECT_THROW(standard_readers().read_text(R"({"events": []})", "x.json"), InvalidInput);
  EXPECT_THROW(standard_readers().read_file("/nonexistent/trace.json"), InvalidInput);
}

// Found by fuzz/account_trace: a pid or tid written as a negative, huge or fractional double was
// converted to an unsigned integer (undefined behaviour; UBSan stops there). A whole number is the
// id its integer would be; any other double gets an id of its own.
TEST(TraceReaderBadInput, DoubleProcessAndThreadIdsAreRead) {
  const char* text = R"([
    {"name": "a", "ph": "X", "ts": 1, "dur": 1, "pid": -5.0, "tid": 3.0},
    {"name": "b", "ph": "X", "ts": 2, "dur": 1, "pid": -5, "tid": 3},
    {"name": "c", "ph": "X", "ts": 3, "dur": 1, "pid": 1e300, "tid": -2.5},
    {"name": "d", "ph": "X", "ts": 4, "dur": 1, "pid": 1, "tid": 1e300}
  ])";
  EventTrace trace = standard_readers().read_text(text, "double-ids.json");
  ASSERT_EQ(trace.events.size(), 4u);
  EXPECT_EQ(find(trace, "a").thread, find(trace, "b").thread);
  EXPECT_EQ(find(trace, "a").device, find(trace, "b").device);
  EXPECT_NE(find(trace, "c").thread, find(trace, "d").thread);
  resolve_hierarchy(trace);
}

TEST(Hierarchy, OverlapThatDoesNotNestIsCutAndCounted) {
  EventTrace trace;
  TraceEvent a;
  a.name = "a";
  a.device = "cpu";
  a.start_s = 0;
  a.duration_s = 2;
  TraceEvent b = a;
  b.name = "b";
  b.start_s = 1;
  b.duration_s = 3;  // ends at 4, after a's end at 2
  trace.events = {a, b};
  resolve_hierarchy(trace);
  EXPECT_DOUBLE_EQ(trace.events[1].duration_s, 1.0);
  ASSERT_EQ(trace.warnings.size(), 1u);
  EXPECT_THAT(trace.warnings[0], HasSubstr("1 events overlap"));
}

TEST(TraceReaderRegistry, RejectsDuplicateNames) {
  TraceReaderRegistry registry;
  registry.add(make_chrome_trace_reader());
  EXPECT_THROW(registry.add(make_chrome_trace_reader()), InternalError);
  EXPECT_EQ(standard_readers().names(), (std::vector<std::string>{"tf-timeline", "chrome"}));
}

}  // namespace
}  // namespace nnergy::account
