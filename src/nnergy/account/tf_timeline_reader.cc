// TensorFlow 1 timelines (tensorflow.python.client.timeline.Timeline.generate_chrome_trace_format):
// a Chrome trace whose "M" process_name events name devices ("/job:localhost/replica:0/task:0/
// device:GPU:0 Compute"), X events with ts in epoch µs and the scoped op name in args.name.
#include <cmath>
#include <map>
#include <regex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

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
std::string device_of_process(std::string_view process_name) {
  static const std::regex gpu(R"(device:GPU:(\d+))", std::regex::icase);
  std::cmatch match;
  if (std::regex_search(process_name.data(), process_name.data() + process_name.size(), match,
                        gpu)) {
    return "gpu:" + match[1].str();
  }
  return "cpu";
}

// TF writes each GPU stream and "memcpy" as its own process; all run on that GPU. The devices
// come from the process_name events, which may follow the events they name: each event keeps its
// pid until the end.
class TfTimelineReading final : public TraceReading {
 public:
  explicit TfTimelineReading(std::string file_label) : label_(std::move(file_label)) {
    trace_.format = "tf-timeline";
    trace_.epoch_offset_s = 0.0;  // ts are epoch µs
  }

  void add(const simdjson::dom::element& event, std::size_t index) override {
    const ChromeEventFields fields = parse_chrome_event(event, index, label_);
    if (fields.phase == "M" && fields.name == "process_name") {
      device_of_pid_[fields.pid] =
          trace_.names->intern(device_of_process(string_arg(fields, "name")));
      return;
    }
    if (fields.phase != "X") return;
    if (!(fields.dur_us >= 0) || !std::isfinite(fields.ts_us)) {
      ++negative_;
      return;
    }
    TraceEvent out;
    out.thread = fields.tid ^ (fields.pid * 0x9e3779b97f4a7c15ULL);
    const std::string_view op = string_arg(fields, "op");
    out.name = trace_.names->intern(op.empty() ? fields.name : op);
    out.category = trace_.names->intern(fields.category);
    out.qualified_name = trace_.names->intern(string_arg(fields, "name"));
    out.named_by_trace = !out.qualified_name.empty();
    out.start_s = fields.ts_us * 1e-6;
    out.duration_s = fields.dur_us * 1e-6;
    trace_.events.push_back(std::move(out));
    pids_.push_back(fields.pid);
  }

  void reserve_for_share(double share_read) override {
    reserve_events_for_share(trace_.events, share_read);
    pids_.reserve(trace_.events.capacity());
  }

  EventTrace finish(const TraceShape& /*shape*/) override {
    for (std::size_t i = 0; i < trace_.events.size(); ++i) {
      const auto device = device_of_pid_.find(pids_[i]);
      trace_.events[i].device = device == device_of_pid_.end() ? "cpu" : device->second;
    }
    if (negative_ > 0) {
      trace_.warnings.push_back(label_ + ": " + std::to_string(negative_) +
                                " events with a negative or non-finite duration dropped");
    }
    return std::move(trace_);
  }

 private:
  std::string label_;
  EventTrace trace_;
  std::vector<std::uint64_t> pids_;                          // per event of trace_
  std::map<std::uint64_t, std::string_view> device_of_pid_;  // views of trace_.names
  std::size_t negative_ = 0;
};

class TfTimelineReader final : public TraceReader {
 public:
  std::string name() const override { return "tf-timeline"; }

  // A TF timeline names its devices in process_name events before its ops: they are in the first
  // batch of events (about a megabyte of the file).
  bool recognizes(const TraceShape& shape,
                  const simdjson::dom::array* first_events) const override {
    if (shape.bare_array || first_events == nullptr) return false;
    for (const simdjson::dom::element event : *first_events) {
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

  std::unique_ptr<TraceReading> start(const TraceShape& /*shape*/,
                                      const std::string& file_label) const override {
    return std::make_unique<TfTimelineReading>(file_label);
  }
};

}  // namespace

std::unique_ptr<TraceReader> make_tf_timeline_reader() {
  return std::make_unique<TfTimelineReader>();
}

}  // namespace nnergy::account
