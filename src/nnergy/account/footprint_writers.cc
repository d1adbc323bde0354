#include "nnergy/account/footprint_writers.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <numeric>
#include <sstream>

#include "nnergy/core/csv.h"
#include "nnergy/core/error.h"
#include "nnergy/core/json_document.h"
#include "nnergy/core/json_text.h"

namespace nnergy::account {
namespace {

// Perfetto process of a device: CPU 0, GPU N → N + 1.
int process_of(const std::string& device) {
  if (device.rfind("gpu:", 0) == 0) return 1 + std::atoi(device.c_str() + 4);
  return 0;
}

std::string track_name(const std::string& device) {
  if (device.rfind("gpu:", 0) == 0) return "GPU" + device.substr(4) + " power";
  return "CPU power";
}

}  // namespace

nlohmann::ordered_json devices_json(const AccountRun& run, const Accounting& accounting) {
  nlohmann::ordered_json devices = nlohmann::ordered_json::array();
  for (const DeviceAccount& d : accounting.devices) {
    nlohmann::ordered_json j;
    j["device"] = d.device;
    j["has_power"] = d.has_power;
    j["power_sources"] = d.source_ids;
    j["event_count"] = d.event_count;
    j["window_start_s"] = d.window_start_s;
    j["window_end_s"] = d.window_end_s;
    j["measured_energy_j"] = d.measured_energy_j;
    j["attributed_energy_j"] = d.attributed_energy_j;
    j["idle_energy_j"] = d.idle_energy_j;
    j["busy_time_s"] = d.busy_time_s;
    j["idle_time_s"] = d.idle_time_s;
    j["unmeasured_busy_time_s"] = d.unmeasured_busy_time_s;
    for (const AccountRun::PowerRange& range : run.power_ranges) {
      if (range.device != d.device) continue;
      j["power_trace_start_s"] = range.start_s;
      j["power_trace_end_s"] = range.end_s;
      j["power_trace_energy_j"] = range.energy_j;
    }
    devices.push_back(std::move(j));
  }
  return devices;
}

nlohmann::ordered_json footprint_json(const Footprint& footprint) {
  nlohmann::ordered_json entries = nlohmann::ordered_json::array();
  for (const FootprintEntry& e : footprint) {
    entries.push_back({{"name", e.name},
                       {"energy_j", e.energy_j},
                       {"time_s", e.time_s},
                       {"power_w", e.power_w()},
                       {"unmeasured_time_s", e.unmeasured_time_s},
                       {"forward_energy_j", e.forward_energy_j},
                       {"backward_energy_j", e.backward_energy_j},
                       {"other_energy_j", e.other_energy_j},
                       {"cpu_energy_j", e.cpu_energy_j},
                       {"gpu_energy_j", e.gpu_energy_j},
                       {"event_count", e.event_count}});
  }
  return {{"entries", std::move(entries)}};
}

nlohmann::ordered_json edd_json(const EddNode& node) {
  nlohmann::ordered_json j;
  j["name"] = node.name;
  j["energy_j"] = node.energy_j;
  j["time_s"] = node.time_s;
  j["forward_energy_j"] = node.forward_energy_j;
  j["backward_energy_j"] = node.backward_energy_j;
  nlohmann::ordered_json children = nlohmann::ordered_json::array();
  for (const EddNode& child : node.children) children.push_back(edd_json(child));
  j["children"] = std::move(children);
  return j;
}

std::string footprint_csv(const Footprint& footprint, const std::string& context_comments) {
  std::string out = context_comments;
  out +=
      "name,energy_j,time_s,power_w,unmeasured_time_s,forward_energy_j,backward_energy_j,"
      "other_energy_j,cpu_energy_j,gpu_energy_j,event_count\n";
  for (const FootprintEntry& e : footprint) {
    out +=
        fmt::format("{},{},{},{},{},{},{},{},{},{},{}\n", csv::field(e.name), e.energy_j, e.time_s,
                    e.power_w(), e.unmeasured_time_s, e.forward_energy_j, e.backward_energy_j,
                    e.other_energy_j, e.cpu_energy_j, e.gpu_energy_j, e.event_count);
  }
  return out;
}

std::string folded_stacks(const Footprint& footprint, double idle_energy_j) {
  std::string out;
  for (const FootprintEntry& e : footprint) {
    const long long microjoules = std::llround(e.energy_j * 1e6);
    if (microjoules <= 0) continue;
    std::string stack;
    for (const std::string& component : name_path(e.name)) {
      if (!stack.empty()) stack += ';';
      // ';' and ' ' separate frames and the count in the folded format.
      for (char c : component) stack += (c == ';' || c == ' ') ? '_' : c;
    }
    out += fmt::format("{} {}\n", stack, microjoules);
  }
  const long long idle_microjoules = std::llround(idle_energy_j * 1e6);
  if (idle_microjoules > 0) out += fmt::format("(idle) {}\n", idle_microjoules);
  return out;
}

std::string perfetto_trace(const AccountRun& run, const Accounting& accounting,
                           const RunContext& context) {
  nlohmann::ordered_json events = nlohmann::ordered_json::array();
  std::map<std::string, int> processes;
  for (const TraceEvent& e : run.events) {
    const std::string device(e.device);
    processes[device] = process_of(device);
  }
  for (const PowerTimeline& t : run.power) processes[t.device] = process_of(t.device);
  for (const auto& [device, pid] : processes) {
    events.push_back(
        {{"ph", "M"}, {"name", "process_name"}, {"pid", pid}, {"args", {{"name", device}}}});
  }
  // Dense thread ids: raw ones can exceed 2^53 and lose precision in JSON readers.
  std::map<std::pair<std::string, std::uint64_t>, int> threads;
  for (std::size_t i = 0; i < run.events.size(); ++i) {
    const TraceEvent& e = run.events[i];
    const auto [it, inserted] =
        threads.emplace(std::make_pair(e.device, e.thread), static_cast<int>(threads.size()));
    const EventEnergy& energy = accounting.events[i];
    nlohmann::ordered_json event = {{"ph", "X"},
                                    {"name", e.name},
                                    {"cat", e.category.empty() ? "op" : e.category},
                                    {"pid", process_of(std::string(e.device))},
                                    {"tid", it->second},
                                    {"ts", e.start_s * 1e6},
                                    {"dur", e.duration_s * 1e6}};
    event["args"] = {{"qualified_name", e.qualified_name},
                     {"pass", pass_name(e.pass)},
                     {"energy_j", energy.energy_j},
                     {"exclusive_time_s", energy.exclusive_time_s},
                     {"unmeasured_time_s", energy.unmeasured_time_s}};
    events.push_back(std::move(event));
  }
  for (const PowerTimeline& t : run.power) {
    for (std::size_t k = 0; k < t.time_s.size(); ++k) {
      events.push_back({{"ph", "C"},
                        {"name", track_name(t.device)},
                        {"pid", process_of(t.device)},
                        {"ts", t.time_s[k] * 1e6},
                        {"args", {{"W", t.power_w[k]}}}});
    }
  }
  nlohmann::ordered_json trace;
  trace["traceEvents"] = std::move(events);
  trace["displayTimeUnit"] = "ms";
  nlohmann::ordered_json other = context.to_json();
  other["base_epoch_s"] = run.base_epoch_s;
  trace["otherData"] = std::move(other);
  return core::json_text(trace, -1);
}

nlohmann::ordered_json accounting_json(const AccountRun& run, const Accounting& accounting,
                                       const Footprint& tef, const Footprint& stef,
                                       const std::vector<SummarizeRule>& rules,
                                       const RunContext& context) {
  nlohmann::ordered_json j;
  j["context"] = context.to_json();
  j["devices"] = devices_json(run, accounting);
  j["tef"] = footprint_json(tef);
  j["stef"] = footprint_json(stef);
  nlohmann::ordered_json rule_texts = nlohmann::ordered_json::array();
  for (const SummarizeRule& rule : rules) rule_texts.push_back(rule.text);
  j["summarize_rules"] = std::move(rule_texts);
  j["edd"] = edd_json(energy_distribution_diagram(tef));
  j["warnings"] = run.warnings;
  return j;
}

Footprint read_footprint_json(const std::filesystem::path& path) {
  const std::string name = path.string();
  std::ifstream in(path);
  if (!in) throw InvalidInput(name + ": cannot open the footprint file for reading");
  std::ostringstream text;
  text << in.rdbuf();
  nlohmann::json j;
  try {
    j = core::parse_json_document(text.str(), name);
  } catch (const nlohmann::json::exception& e) {
    throw InvalidInput(name +
                       ": expected JSON written by `nnergy account --json`, found "
                       "unparsable text (" +
                       e.what() + ")");
  }
  const char* key = j.contains("stef") ? "stef" : "tef";
  if (!j.contains(key) || !j[key].contains("entries") || !j[key]["entries"].is_array()) {
    throw InvalidInput(name + ": expected \"stef\" or \"tef\" with \"entries\", found neither");
  }
  Footprint footprint;
  for (const auto& entry : j[key]["entries"]) {
    if (!entry.contains("name") || !entry["name"].is_string() || !entry.contains("energy_j") ||
        !entry["energy_j"].is_number()) {
      throw InvalidInput(name + ": expected entries with \"name\" and \"energy_j\", found " +
                         core::describe_json_value(entry));
    }
    FootprintEntry e;
    e.name = entry["name"].get<std::string>();
    e.energy_j = entry["energy_j"].get<double>();
    footprint.push_back(std::move(e));
  }
  return footprint;
}

nlohmann::ordered_json timeline_json(const AccountRun& run, const Accounting& accounting,
                                     std::size_t max_points, std::size_t max_events) {
  nlohmann::ordered_json power = nlohmann::ordered_json::array();
  for (const PowerTimeline& timeline : run.power) {
    const std::size_t n = timeline.time_s.size();
    const std::size_t step =
        std::max<std::size_t>(1, (n + max_points - 1) / std::max<std::size_t>(max_points, 1));
    std::vector<double> t;
    std::vector<double> w;
    for (std::size_t i = 0; i < n; i += step) {
      t.push_back(timeline.time_s[i]);
      w.push_back(timeline.power_w[i]);
    }
    std::string sources;
    for (const std::string& id : timeline.source_ids) sources += (sources.empty() ? "" : "+") + id;
    power.push_back({{"device", timeline.device}, {"source", sources}, {"t_s", t}, {"power_w", w}});
  }
  // Nesting depth per (device, thread): events sorted by start (longer first on ties), a stack
  // of the enclosing events' ends.
  constexpr int kMaxDepth = 2;
  std::vector<std::size_t> order(run.events.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    const TraceEvent& x = run.events[a];
    const TraceEvent& y = run.events[b];
    if (x.device != y.device) return x.device < y.device;
    if (x.thread != y.thread) return x.thread < y.thread;
    if (x.start_s != y.start_s) return x.start_s < y.start_s;
    return x.duration_s > y.duration_s;
  });
  std::vector<std::pair<std::size_t, int>> shown;  // event, depth
  std::vector<double> open_ends;
  for (std::size_t k = 0; k < order.size(); ++k) {
    const TraceEvent& e = run.events[order[k]];
    if (k > 0) {
      const TraceEvent& prev = run.events[order[k - 1]];
      if (prev.device != e.device || prev.thread != e.thread) open_ends.clear();
    }
    while (!open_ends.empty() && open_ends.back() <= e.start_s) open_ends.pop_back();
    const int depth = static_cast<int>(open_ends.size());
    open_ends.push_back(e.start_s + e.duration_s);
    if (depth <= kMaxDepth) shown.emplace_back(order[k], depth);
  }
  const std::size_t total = shown.size();
  if (shown.size() > max_events) {
    std::nth_element(shown.begin(), shown.begin() + static_cast<std::ptrdiff_t>(max_events),
                     shown.end(), [&](const auto& a, const auto& b) {
                       return run.events[a.first].duration_s > run.events[b.first].duration_s;
                     });
    shown.resize(max_events);
  }
  nlohmann::ordered_json events = nlohmann::ordered_json::array();
  for (const auto& [index, depth] : shown) {
    const TraceEvent& e = run.events[index];
    events.push_back({{"device", e.device},
                      {"name", e.name},
                      {"start_s", e.start_s},
                      {"end_s", e.start_s + e.duration_s},
                      {"depth", depth},
                      {"energy_j", accounting.events[index].energy_j}});
  }
  return {{"power_trace", std::move(power)},
          {"timeline", std::move(events)},
          {"timeline_events_total", total}};
}

}  // namespace nnergy::account
