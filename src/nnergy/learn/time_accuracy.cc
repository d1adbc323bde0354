#include "nnergy/learn/time_accuracy.h"

#include <map>

#include "nnergy/core/statistics.h"

namespace nnergy::learn {

namespace {

TimeAccuracy accuracy_of(const std::string& group,
                         const std::vector<const network::EvaluatedTime*>& items) {
  TimeAccuracy a;
  a.group = group;
  if (items.empty()) return a;
  std::vector<double> measured;
  std::vector<double> predicted;
  std::vector<double> ratios;
  for (const network::EvaluatedTime* e : items) {
    measured.push_back(e->measurement.measured_s);
    predicted.push_back(e->predicted_s);
    ratios.push_back(e->ratio());
  }
  a.metrics = fit_metrics(measured, predicted);
  a.median_ratio = statistics::median(ratios);
  return a;
}

}  // namespace

std::vector<TimeAccuracy> time_accuracy(
    const std::vector<network::EvaluatedTime>& evaluated,
    const std::function<std::string(const network::EvaluatedTime&)>& key) {
  std::map<std::string, std::vector<const network::EvaluatedTime*>> groups;
  std::vector<const network::EvaluatedTime*> all;
  for (const network::EvaluatedTime& e : evaluated) {
    groups[key(e)].push_back(&e);
    all.push_back(&e);
  }
  std::vector<TimeAccuracy> out;
  for (const auto& [group, items] : groups) out.push_back(accuracy_of(group, items));
  out.push_back(accuracy_of("all", all));
  return out;
}

}  // namespace nnergy::learn
