#include "nnergy/report/time_accuracy_report.h"

#include <fmt/format.h>

#include "nnergy/calibration/time_calibration.h"
#include "nnergy/core/error.h"
#include "nnergy/report/text_table.h"

namespace nnergy::report {

const std::vector<std::pair<std::string, RunKey>>& run_groupings() {
  static const std::vector<std::pair<std::string, RunKey>> groupings = {
      {"device", [](const auto& m) { return m.device_id; }},
      {"precision", [](const auto& m) { return std::string(device::to_string(m.precision)); }},
      {"mode",
       [](const auto& m) {
         std::string mode(graph::to_string(m.mode));
         if (m.part == network::TimedPart::kForward) mode += " (forward)";
         if (m.part == network::TimedPart::kBackward) mode += " (backward)";
         return mode;
       }},
      {"grade", [](const auto& m) { return m.grade; }},
      {"source", [](const auto& m) { return calibration::source_key(m.source); }},
  };
  return groupings;
}

const std::vector<std::pair<std::string, TimeKey>>& time_groupings() {
  static const std::vector<std::pair<std::string, TimeKey>> groupings = [] {
    std::vector<std::pair<std::string, TimeKey>> out;
    for (const auto& [name, key] : run_groupings()) {
      // An init-capture, not `[key]`: clang before 16 cannot capture a structured binding.
      out.emplace_back(name,
                       [by = key](const network::EvaluatedTime& t) { return by(t.measurement); });
    }
    return out;
  }();
  return groupings;
}

const TimeKey& time_grouping(const std::string& name) {
  for (const auto& [n, key] : time_groupings()) {
    if (n == name) return key;
  }
  throw InternalError("no time grouping named " + name);
}

std::string accuracy_table(const std::string& title,
                           const std::vector<calibration::TimeAccuracy>& rows) {
  TextTable t;
  t.add_column(title, TextTable::Align::kLeft);
  for (const char* c : {"n", "MAPE %", "median pred/meas", "within ±10 %"}) {
    t.add_column(c, TextTable::Align::kRight);
  }
  for (const calibration::TimeAccuracy& r : rows) {
    t.add_row({r.group, std::to_string(r.metrics.count),
               fmt::format("{:.1f}", r.metrics.mape_percent), fmt::format("{:.2f}", r.median_ratio),
               fmt::format("{:.0f} %", 100 * r.metrics.within_10_percent)});
  }
  return t.render();
}

nlohmann::ordered_json accuracy_json(const std::vector<calibration::TimeAccuracy>& rows) {
  nlohmann::ordered_json j = nlohmann::ordered_json::array();
  for (const calibration::TimeAccuracy& r : rows) {
    j.push_back({{"group", r.group},
                 {"count", r.metrics.count},
                 {"mape", r.metrics.mape_percent / 100},
                 {"median_ratio", r.median_ratio},
                 {"within_10_percent", r.metrics.within_10_percent}});
  }
  return j;
}

}  // namespace nnergy::report
