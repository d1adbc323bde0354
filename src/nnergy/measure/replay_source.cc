#include "nnergy/measure/replay_source.h"

#include <algorithm>
#include <iterator>
#include <memory>
#include <utility>

#include "nnergy/core/error.h"
#include "nnergy/measure/source_factories.h"

namespace nnergy::measure {

ReplaySource::ReplaySource(PowerTrace trace, const std::string& file_label)
    : info_(std::move(trace.info)), samples_(std::move(trace.samples)) {
  if (samples_.empty()) {
    throw InvalidInput(file_label + ": source '" + info_.id + "' has no samples to replay");
  }
  info_.id = "replay:" + file_label + "#" + info_.id;
  info_.kind = "replay";
  // The first energy reading is the origin, so a replay's counter starts at 0 like a fresh one
  // rather than at whatever the recorded device had accumulated since boot.
  for (const PowerSample& s : samples_) {
    if (s.energy_j) {
      energy_origin_j_ = s.energy_j;
      break;
    }
  }
}

double ReplaySource::duration_s() const { return samples_.back().time_s - samples_.front().time_s; }

PowerSample ReplaySource::read(double time_s) {
  const double recorded_s = samples_.front().time_s + time_s;
  // First sample after recorded_s; the one before it is the last at or before recorded_s.
  auto after =
      std::upper_bound(samples_.begin(), samples_.end(), recorded_s,
                       [](double t, const PowerSample& sample) { return t < sample.time_s; });
  PowerSample sample = after == samples_.begin() ? *after : *std::prev(after);
  sample.time_s = time_s;
  sample.epoch_s = 0;  // the sampler stamps the replay's own wall-clock time
  if (sample.energy_j) *sample.energy_j -= *energy_origin_j_;
  return sample;
}

Detection open_replay_sources(const std::string& path, TraceWarnings* warnings) {
  if (path.empty()) {
    throw InvalidInput("expected a trace file path, e.g. replay:run.csv");
  }
  Detection detection;
  for (PowerTrace& trace : read_trace_file(path, warnings)) {
    detection.sources.push_back(std::make_unique<ReplaySource>(std::move(trace), path));
  }
  return detection;
}

Detection open_replay_sources(const std::string& argument) {
  TraceWarnings warnings;
  Detection detection = open_replay_sources(argument, &warnings);
  detection.warnings = std::move(warnings.messages);
  return detection;
}

}  // namespace nnergy::measure
