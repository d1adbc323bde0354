// Chrome trace format as PyTorch writes it: Kineto (torch >= 1.8 with Kineto) and the legacy
// autograd profiler of Debian's torch 1.13 (bare array, no categories, empty args).
#include <cmath>
#include <functional>

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

class ChromeTraceReader final : public TraceReader {
 public:
  std::string name() const override { return "chrome"; }

  bool recognizes(const simdjson::dom::element& document) const override {
    if (document.is_array()) return true;
    simdjson::dom::array events;
    return document["traceEvents"].get_array().get(events) == simdjson::SUCCESS;
  }

  EventTrace read(const simdjson::dom::element& document,
                  const std::string& file_label) const override {
    EventTrace trace;
    simdjson::dom::array events;
    if (document.is_array()) {
      events = document.get_array().value_unsafe();
    } else if (document["traceEvents"].get_array().get(events) != simdjson::SUCCESS) {
      throw InvalidInput(file_label + ": expected \"traceEvents\" to be an array of events");
    }
    if (!document.is_array()) {
      double base_ns = 0;
      if (document["baseTimeNanoseconds"].get_double().get(base_ns) == simdjson::SUCCESS) {
        trace.epoch_offset_s = base_ns * 1e-9;
      }
    }
    trace.events.reserve(events.size());
    std::size_t index = 0;
    std::size_t negative = 0;
    std::size_t first_negative = 0;
    bool any_category = false;
    double max_ts_us = 0;
    for (const simdjson::dom::element event : events) {
      const ChromeEventFields fields = parse_chrome_event(event, index, file_label);
      ++index;
      if (fields.phase != "X") continue;
      if (!fields.category.empty()) any_category = true;
      if (is_skipped_category(fields.category)) continue;
      if (fields.name == "nnergy::marker") continue;
      if (!(fields.dur_us >= 0) || !std::isfinite(fields.ts_us)) {
        if (negative++ == 0) first_negative = index - 1;
        continue;
      }
      TraceEvent out;
      out.name = std::string(fields.name);
      out.category = std::string(fields.category);
      out.start_s = fields.ts_us * 1e-6;
      out.duration_s = fields.dur_us * 1e-6;
      max_ts_us = std::max(max_ts_us, fields.ts_us);
      const bool gpu = is_gpu_category(fields.category) || fields.pid_text == "CUDA functions";
      if (gpu) {
        const auto device = integer_arg(fields, "device");
        out.device = "gpu:" + (device ? std::to_string(*device)
                                      : (fields.pid_text == "CUDA functions" ? std::string("0")
                                                                             : fields.pid_text));
        out.thread = fields.tid;
      } else {
        out.device = "cpu";
        // Threads of different processes share the CPU but not their nesting.
        out.thread = fields.tid ^ (fields.pid * 0x9e3779b97f4a7c15ULL);
      }
      out.external_id = integer_arg(fields, "External id");
      out.correlation = integer_arg(fields, "correlation");
      out.sequence_nr = integer_arg(fields, "Sequence number");
      out.module = string_arg(fields, "module");
      if (starts_with(out.name, "module::")) {
        out.module = out.name.substr(8);
        out.is_scope = true;
      } else if (starts_with(out.name, "nn.Module: ")) {
        out.module = out.name.substr(11);
        out.is_scope = true;
      } else if (starts_with(out.name, "ProfilerStep#")) {
        out.is_scope = true;
      }
      trace.events.push_back(std::move(out));
    }
    trace.format = (!document.is_array() || any_category) ? "chrome" : "torch-legacy";
    if (!trace.epoch_offset_s && max_ts_us > kEpochMicrosecondsThreshold) {
      trace.epoch_offset_s = 0.0;
    }
    if (negative > 0) {
      trace.warnings.push_back(file_label + ": " + std::to_string(negative) +
                               " events with a negative or non-finite duration dropped (first: "
                               "event " +
                               std::to_string(first_negative) + ")");
    }
    return trace;
  }
};

}  // namespace

std::unique_ptr<TraceReader> make_chrome_trace_reader() {
  return std::make_unique<ChromeTraceReader>();
}

}  // namespace nnergy::account
