#include "nnergy/account/account_run.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>
#include <unordered_set>

#include "nnergy/account/footprint.h"
#include "nnergy/account/hierarchy.h"
#include "nnergy/core/error.h"
#include "nnergy/core/huge_pages.h"
#include "nnergy/core/json_document.h"

namespace nnergy::account {
namespace {

double timeline_energy_j(const PowerTimeline& timeline, bool interpolate) {
  double energy_j = 0;
  for (std::size_t i = 0; i + 1 < timeline.time_s.size(); ++i) {
    const double dt = timeline.time_s[i + 1] - timeline.time_s[i];
    energy_j += interpolate ? 0.5 * (timeline.power_w[i] + timeline.power_w[i + 1]) * dt
                            : timeline.power_w[i] * dt;
  }
  return energy_j;
}

// Counts the distinct qualified names deeper than the EDD nests (name_path keeps their levels
// from the kMaxEddDepth-th on as one) and says so in the run's warnings.
void warn_of_deep_names(AccountRun& run) {
  // The events view interned names: each distinct text is measured once.
  std::unordered_set<const char*> measured;
  std::unordered_set<std::string_view> deep;
  for (const TraceEvent& event : run.events) {
    const std::string_view name = event.qualified_name;
    if (name.size() < kMaxEddDepth || !measured.insert(name.data()).second) continue;
    if (name_depth(name) > kMaxEddDepth) deep.insert(name);
  }
  if (deep.empty()) return;
  const std::string_view example = *std::min_element(deep.begin(), deep.end());
  run.warnings.push_back(fmt::format(
      "{} event name{} deeper than {} module levels (e.g. '{}{}'); the energy distribution "
      "diagram keeps {} levels from the {}th on as one",
      deep.size(), deep.size() == 1 ? " nests" : "s nest", kMaxEddDepth, example.substr(0, 60),
      example.size() > 60 ? "..." : "", deep.size() == 1 ? "its" : "their", kMaxEddDepth));
}

}  // namespace

AccountInputs read_session_directory(const std::filesystem::path& directory, SettingNames names) {
  const std::filesystem::path file = directory / "session.json";
  std::ifstream in(file);
  if (!in) {
    throw InvalidInput(file.string() +
                       ": expected a session file written by nnergy_torch.session, found none "
                       "(or pass " +
                       setting_name(names, "trace_files", "trace") + " and " +
                       setting_name(names, "power_files", "power") + ")");
  }
  std::ostringstream text;
  text << in.rdbuf();
  nlohmann::json session;
  try {
    session = core::parse_json_document(text.str(), file.string());
  } catch (const nlohmann::json::exception& e) {
    throw InvalidInput(file.string() + ": expected JSON, found unparsable text (" + e.what() + ")");
  }
  const auto string_key = [&](const char* key) {
    if (!session.contains(key) || !session[key].is_string()) {
      throw InvalidInput(file.string() + ": expected a string \"" + key + "\", found " +
                         (session.contains(key) ? session[key].type_name() : "none"));
    }
    return session[key].get<std::string>();
  };
  if (!session.is_object() || !session.contains("format_version") ||
      session["format_version"] != 1) {
    throw InvalidInput(file.string() + ": expected \"format_version\": 1, found " +
                       (session.is_object() && session.contains("format_version")
                            ? core::describe_json_value(session["format_version"])
                            : std::string("none")));
  }
  AccountInputs inputs;
  inputs.label = directory.filename().empty() ? directory.parent_path().filename().string()
                                              : directory.filename().string();
  inputs.trace_files.push_back(directory / string_key("trace_file"));
  inputs.power_files.push_back(directory / string_key("power_file"));
  if (session.contains("trace_epoch_offset_s") && session["trace_epoch_offset_s"].is_number()) {
    inputs.session_offset_s = session["trace_epoch_offset_s"].get<double>();
  }
  if (session.contains("power_devices") && session["power_devices"].is_object()) {
    for (const auto& [source, device] : session["power_devices"].items()) {
      if (!device.is_string()) {
        throw InvalidInput(file.string() + ": expected \"power_devices\"[\"" + source +
                           "\"] to be a device string (\"cpu\", \"gpu:0\"), found " +
                           core::describe_json_value(device));
      }
      inputs.source_devices[source] = device.get<std::string>();
    }
  }
  return inputs;
}

std::string device_of_source(const measure::SourceInfo& info,
                             const std::map<std::string, std::string>& source_devices) {
  const auto found = source_devices.find(info.id);
  if (found != source_devices.end()) return found->second == "none" ? "" : found->second;
  if (info.kind == "gpu") {
    const std::size_t colon = info.id.rfind(':');
    return "gpu:" + (colon == std::string::npos ? std::string("0") : info.id.substr(colon + 1));
  }
  if (info.kind == "cpu-package" || info.kind == "dram") return "cpu";
  return "";
}

bool is_power_device(const std::string& device) {
  return device == "cpu" || device == "none" ||
         (device.rfind("gpu:", 0) == 0 && device.size() > 4 &&
          device.find_first_not_of("0123456789", 4) == std::string::npos);
}

std::pair<std::string, std::string> parse_power_device(const std::string& item,
                                                       const std::string& setting) {
  const std::size_t equals = item.rfind('=');
  const std::string device = equals == std::string::npos ? "" : item.substr(equals + 1);
  if (equals == std::string::npos || equals == 0 || !is_power_device(device)) {
    throw InvalidInput(
        setting + " '" + item +
        "': expected SOURCE=DEVICE with DEVICE cpu, gpu:N or none (e.g. synthetic=cpu), found " +
        (equals == std::string::npos ? std::string("no '='") : "device '" + device + "'"));
  }
  return {item.substr(0, equals), device};
}

AccountRun load_account_run(const AccountInputs& inputs, const TraceReaderRegistry& readers,
                            bool interpolate, SettingNames names) {
  if (inputs.trace_files.empty()) {
    throw InvalidInput(setting_name(names, "trace_files", "trace") +
                       ": expected at least one program trace file, found none");
  }
  AccountRun run;
  run.label = inputs.label;
  struct Loaded {
    EventTrace trace;
    double offset_s;
  };
  std::vector<Loaded> loaded;
  std::string first_base_source;
  for (const auto& path : inputs.trace_files) {
    EventTrace trace = readers.read_file(path);
    resolve_hierarchy(trace);
    double offset_s = 0;
    if (inputs.explicit_offset_s) {
      offset_s = *inputs.explicit_offset_s;
    } else if (trace.epoch_offset_s) {
      offset_s = *trace.epoch_offset_s;
    } else if (inputs.session_offset_s) {
      offset_s = *inputs.session_offset_s;
    } else {
      throw InvalidInput(path.string() + ": expected a time base (baseTimeNanoseconds, epoch ts, " +
                         "a session's trace_epoch_offset_s or " + setting_name(names, "offset_us") +
                         "), found none: a " + trace.format +
                         " trace's ts count from the profiler's start");
    }
    for (std::string& warning : trace.warnings) run.warnings.push_back(std::move(warning));
    run.trace_formats.push_back(trace.format);
    loaded.push_back({std::move(trace), offset_s});
  }
  // Accounting time 0 is the earliest event, so that times stay small and precise as doubles.
  double base = std::numeric_limits<double>::infinity();
  for (const Loaded& l : loaded) {
    for (const TraceEvent& event : l.trace.events)
      base = std::min(base, event.start_s + l.offset_s);
  }
  if (!std::isfinite(base)) base = loaded.front().offset_s;
  run.base_epoch_s = base;
  // Moved, not copied, and each trace's events freed once taken: a trace of a million events
  // is never held twice.
  std::size_t total = 0;
  for (const Loaded& l : loaded) total += l.trace.events.size();
  for (Loaded& l : loaded) {
    const double shift = l.offset_s - base;
    for (TraceEvent& event : l.trace.events) event.start_s += shift;
    if (run.events.empty()) {
      run.events = std::move(l.trace.events);
      run.events.reserve(total);
      advise_huge_pages(run.events.data(), run.events.capacity() * sizeof(TraceEvent));
    } else {
      std::move(l.trace.events.begin(), l.trace.events.end(), std::back_inserter(run.events));
    }
    l.trace.events = {};
    run.names.push_back(std::move(l.trace.names));
  }

  warn_of_deep_names(run);

  std::map<std::string, std::vector<measure::PowerTrace>> by_device;
  for (const auto& path : inputs.power_files) {
    measure::TraceWarnings warnings;
    std::vector<measure::PowerTrace> traces = measure::read_trace_file(path, &warnings);
    for (std::string& message : warnings.messages) run.warnings.push_back(std::move(message));
    if (traces.empty()) {
      throw InvalidInput(path.string() +
                         ": expected power samples, found an empty power trace (no source has "
                         "samples with power)");
    }
    for (measure::PowerTrace& trace : traces) {
      const std::string device = device_of_source(trace.info, inputs.source_devices);
      if (device.empty()) {
        run.warnings.push_back(
            path.string() + ": power source '" + trace.info.id + "' (kind " + trace.info.kind +
            ") is not assigned to a device and is left out; assign it with " +
            setting_entry(names, "power_devices", "power_device", trace.info.id, "cpu", true) +
            " (or gpu:N)");
        continue;
      }
      by_device[device].push_back(std::move(trace));
    }
  }
  for (const auto& [device, traces] : by_device) {
    std::vector<const measure::PowerTrace*> pointers;
    for (const auto& trace : traces) pointers.push_back(&trace);
    PowerTimeline timeline = combine_power_traces(device, pointers, base, interpolate);
    run.power_ranges.push_back({device, timeline.time_s.front(), timeline.time_s.back(),
                                timeline_energy_j(timeline, interpolate)});
    run.power.push_back(std::move(timeline));
  }
  return run;
}

}  // namespace nnergy::account
