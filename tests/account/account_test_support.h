#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "nnergy/account/energy_sweep.h"
#include "nnergy/account/trace_event.h"

namespace nnergy::account::testing {

/// A CPU event on `thread` from `start_s` for `duration_s`, named `name` (viewed, not copied:
/// a literal, or text that outlives the event).
inline TraceEvent cpu_event(std::string_view name, std::uint64_t thread, double start_s,
                            double duration_s) {
  TraceEvent e;
  e.name = name;
  e.qualified_name = name;
  e.device = "cpu";
  e.thread = thread;
  e.start_s = start_s;
  e.duration_s = duration_s;
  return e;
}

/// A timeline of `device` from (time, power) points.
inline PowerTimeline timeline(const std::string& device,
                              const std::vector<std::pair<double, double>>& points) {
  PowerTimeline t;
  t.device = device;
  t.source_ids = {"test"};
  for (const auto& [time_s, power_w] : points) {
    t.time_s.push_back(time_s);
    t.power_w.push_back(power_w);
  }
  return t;
}

}  // namespace nnergy::account::testing
