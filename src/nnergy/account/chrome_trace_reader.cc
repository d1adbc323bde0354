// Chrome trace format as PyTorch writes it: Kineto (torch >= 1.8 with Kineto) and the legacy
// autograd profiler of Debian's torch 1.13 (bare array, no categories, empty args).
#include <algorithm>
#include <cmath>
#include <functional>
#include <utility>

#include "nnergy/account/chrome_event_parser.h"
#include "nnergy/account/trace_reader.h"
#include "nnergy/core/error.h"

namespace nnergy::account {
namespace {

// Kineto ts are µs relative to baseTimeNanoseconds; files without it from older Kineto carry
// epoch µs, recognisable by their size (after 2001-09-09 epoch µs exceed 1e15).
constexpr double kEpochMicrosecondsThreshold = 1e15;

bool is_gpu_category(std::string_view category) {
  return category == "kernel" || category == "gpu_memcpy" || category == "gpu_memset" ||
         category == "Kernel" || category == "Memcpy" || category == "Memset";
}

// Events that are not work on a device: the whole-trace span, GPU-side copies of CPU
// annotations (they overlap the kernels they describe), flow arrows.
bool is_skipped_category(std::string_view category) {
  return category == "Trace" || category == "gpu_user_annotation" || category == "ac2g" ||
         category == "overhead";
}

bool starts_with(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

class ChromeTraceReading final : public TraceReading {
 public:
  ChromeTraceReading(bool bare_array, std::string file_label)
      : bare_array_(bare_array), label_(std::move(file_label)) {}

  void add(const simdjson::dom::element& event, std::size_t index) override {
    const ChromeEventFields fields = parse_chrome_event(event, index, label_);
    if (fields.phase != "X") return;
    if (!fields.category.empty()) any_category_ = true;
    if (is_skipped_category(fields.category)) return;
    if (fields.name == "nnergy::marker") return;
    if (!(fields.dur_us >= 0) || !std::isfinite(fields.ts_us)) {
      if (negative_++ == 0) first_negative_ = index;
      return;
    }
    NameTable& names = *trace_.names;
    TraceEvent out;
    out.name = names.intern(fields.name);
    out.category = names.intern(fields.category);
    out.start_s = fields.ts_us * 1e-6;
    out.duration_s = fields.dur_us * 1e-6;
    max_ts_us_ = std::max(max_ts_us_, fields.ts_us);
    const bool gpu = is_gpu_category(fields.category) || fields.pid_text == "CUDA functions";
    if (gpu) {
      const auto device = integer_arg(fields, "device");
      out.device =
          names.intern("gpu:" + (device ? std::to_string(*device)
                                        : (fields.pid_text == "CUDA functions" ? std::string("0")
                                                                               : fields.pid_text)));
      out.thread = fields.tid;
    } else {
      out.device = "cpu";
      // Threads of different processes share the CPU but not their nesting.
      out.thread = fields.tid ^ (fields.pid * 0x9e3779b97f4a7c15ULL);
    }
    out.external_id = integer_arg(fields, "External id");
    out.correlation = integer_arg(fields, "correlation");
    out.sequence_nr = integer_arg(fields, "Sequence number");
    out.module = names.intern(string_arg(fields, "module"));
    // The module of a module range is the rest of its (interned) name.
    if (starts_with(out.name, "module::")) {
      out.module = out.name.substr(8);
      out.is_scope = true;
    } else if (starts_with(out.name, "nn.Module: ")) {
      out.module = out.name.substr(11);
      out.is_scope = true;
    } else if (starts_with(out.name, "ProfilerStep#")) {
      out.is_scope = true;
    }
    trace_.events.push_back(std::move(out));
  }

  void reserve_for_share(double share_read) override {
    reserve_events_for_share(trace_.events, share_read);
  }

  EventTrace finish(const TraceShape& shape) override {
    if (!bare_array_) {
      if (const auto base_ns = shape.members.number("baseTimeNanoseconds")) {
        trace_.epoch_offset_s = *base_ns * 1e-9;
      }
    }
    trace_.format = (!bare_array_ || any_category_) ? "chrome" : "torch-legacy";
    if (!trace_.epoch_offset_s && max_ts_us_ > kEpochMicrosecondsThreshold) {
      trace_.epoch_offset_s = 0.0;
    }
    if (negative_ > 0) {
      trace_.warnings.push_back(label_ + ": " + std::to_string(negative_) +
                                " events with a negative or non-finite duration dropped (first: "
                                "event " +
                                std::to_string(first_negative_) + ")");
    }
    return std::move(trace_);
  }

 private:
  bool bare_array_;
  std::string label_;
  EventTrace trace_;
  std::size_t negative_ = 0;
  std::size_t first_negative_ = 0;
  bool any_category_ = false;
  double max_ts_us_ = 0;
};

class ChromeTraceReader final : public TraceReader {
 public:
  std::string name() const override { return "chrome"; }

  bool recognizes(const TraceShape& shape,
                  const simdjson::dom::array* /*first_events*/) const override {
    return shape.has_event_array;
  }

  std::unique_ptr<TraceReading> start(const TraceShape& shape,
                                      const std::string& file_label) const override {
    return std::make_unique<ChromeTraceReading>(shape.bare_array, file_label);
  }
};

}  // namespace

std::unique_ptr<TraceReader> make_chrome_trace_reader() {
  return std::make_unique<ChromeTraceReader>();
}

}  // namespace nnergy::account
