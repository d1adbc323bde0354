#include "nnergy/calibration/time_accuracy.h"

#include <map>

#include "nnergy/core/statistics.h"

namespace nnergy::calibration {

namespace {

// A figure's group, measured and predicted value.
struct Grouped {
  std::string group;
  double measured = 0;
  double predicted = 0;
};

TimeAccuracy accuracy_of(const std::string& group, const std::vector<const Grouped*>& items) {
  TimeAccuracy a;
  a.group = group;
  if (items.empty()) return a;
  std::vector<double> measured;
  std::vector<double> predicted;
  std::vector<double> ratios;
  for (const Grouped* g : items) {
    measured.push_back(g->measured);
    predicted.push_back(g->predicted);
    ratios.push_back(g->predicted / g->measured);
  }
  a.metrics = core::fit_metrics(measured, predicted);
  a.median_ratio = statistics::median(ratios);
  return a;
}

std::vector<TimeAccuracy> accuracy_by_group(const std::vector<Grouped>& figures) {
  std::map<std::string, std::vector<const Grouped*>> groups;
  std::vector<const Grouped*> all;
  for (const Grouped& g : figures) {
    groups[g.group].push_back(&g);
    all.push_back(&g);
  }
  std::vector<TimeAccuracy> out;
  for (const auto& [group, items] : groups) out.push_back(accuracy_of(group, items));
  out.push_back(accuracy_of("all", all));
  return out;
}

}  // namespace

std::vector<TimeAccuracy> time_accuracy(
    const std::vector<network::EvaluatedTime>& evaluated,
    const std::function<std::string(const network::EvaluatedTime&)>& key) {
  std::vector<Grouped> figures;
  for (const network::EvaluatedTime& e : evaluated) {
    figures.push_back({key(e), e.measurement.measured_s, e.predicted_s});
  }
  return accuracy_by_group(figures);
}

std::vector<TimeAccuracy> figure_accuracy(
    const std::vector<ScoredFigure>& figures,
    const std::function<std::string(const network::NetworkTimeMeasurement&)>& key) {
  std::vector<Grouped> grouped;
  for (const ScoredFigure& f : figures) grouped.push_back({key(*f.run), f.measured, f.predicted});
  return accuracy_by_group(grouped);
}

}  // namespace nnergy::calibration
