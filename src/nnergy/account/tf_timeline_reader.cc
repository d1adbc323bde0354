// TensorFlow 1 timelines (tensorflow.python.client.timeline.Timeline.generate_chrome_trace_format):
// a Chrome trace whose "M" process_name events name devices ("/job:localhost/replica:0/task:0/
// device:GPU:0 Compute"), X events with ts in epoch µs and the scoped op name in args.name.
#include <cmath>
#include <map>
#include <regex>

#include "nnergy/account/chrome_event_parser.h"
#include "nnergy/account/trace_reader.h"
#include "nnergy/core/error.h"

namespace nnergy::account {
namespace {

bool is_tf_process_name(std::string_view name) {
  return name.find("/job:") != std::string_view::npos ||
         name.find("/device:") != std::string_view::npos;
}

// "/job:localhost/replica:0/task:0/device:GPU:0 Compute" -> "gpu:0"; CPU processes -> "cpu".
std::string device_of_process(const std::string& process_name) {
  static const std::regex gpu(R"(device:GPU:(\d+))", std::regex::icase);
  std::smatch match;
  if (std::regex_search(process_name, match, gpu)) return "gpu:" + match[1].str();
  return "cpu";
}

class TfTimelineReader final : public TraceReader {
 public:
  std::string name() const override { return "tf-timeline"; }

  bool recognizes(const simdjson::dom::element& document) const override {
    simdjson::dom::array events;
    if (document["traceEvents"].get_array().get(events) != simdjson::SUCCESS) return false;
    for (const simdjson::dom::element event : events) {
      std::string_view phase;
      std::string_view process;
      if (event["ph"].get_string().get(phase) == simdjson::SUCCESS && phase == "M" &&
          event["args"]["name"].get_string().get(process) == simdjson::SUCCESS &&
          is_tf_process_name(process)) {
        return true;
      }
    }
    return false;
  }

  EventTrace read(const simdjson::dom::element& document,
                  const std::string& file_label) const override {
    EventTrace trace;
    trace.format = "tf-timeline";
    trace.epoch_offset_s = 0.0;  // ts are epoch µs
    const simdjson::dom::array events = document["traceEvents"].get_array().value_unsafe();
    std::map<std::uint64_t, std::string> device_of_pid;
    std::size_t index = 0;
    for (const simdjson::dom::element event : events) {
      const ChromeEventFields fields = parse_chrome_event(event, index++, file_label);
      if (fields.phase == "M" && fields.name == "process_name") {
        device_of_pid[fields.pid] = device_of_process(string_arg(fields, "name"));
      }
    }
    index = 0;
    std::size_t negative = 0;
    for (const simdjson::dom::element event : events) {
      const ChromeEventFields fields = parse_chrome_event(event, index++, file_label);
      if (fields.phase != "X") continue;
      if (!(fields.dur_us >= 0) || !std::isfinite(fields.ts_us)) {
        ++negative;
        continue;
      }
      const auto device = device_of_pid.find(fields.pid);
      // TF writes each GPU stream and "memcpy" as its own process; all run on that GPU.
      TraceEvent out;
      out.device = device == device_of_pid.end() ? "cpu" : device->second;
      out.thread = fields.tid ^ (fields.pid * 0x9e3779b97f4a7c15ULL);
      out.name = string_arg(fields, "op");
      if (out.name.empty()) out.name = std::string(fields.name);
      out.category = std::string(fields.category);
      out.scoped_name = string_arg(fields, "name");
      out.start_s = fields.ts_us * 1e-6;
      out.duration_s = fields.dur_us * 1e-6;
      trace.events.push_back(std::move(out));
    }
    if (negative > 0) {
      trace.warnings.push_back(file_label + ": " + std::to_string(negative) +
                               " events with a negative or non-finite duration dropped");
    }
    return trace;
  }
};

}  // namespace

std::unique_ptr<TraceReader> make_tf_timeline_reader() {
  return std::make_unique<TfTimelineReader>();
}

}  // namespace nnergy::account
