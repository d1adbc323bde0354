#include "nnergy/fleet/live_readings.h"

#include "nnergy/core/error.h"

namespace nnergy::fleet {

LiveReadings::LiveReadings(std::vector<measure::SourceInfo> infos) {
  for (measure::SourceInfo& info : infos) {
    readings_.push_back(SourceReading{std::move(info), {}, {}, false, {}, {}});
  }
  totals_.resize(readings_.size());
}

void LiveReadings::update(std::size_t source, const measure::PowerSample& sample) {
  const std::lock_guard<std::mutex> lock(mutex_);
  if (source >= readings_.size()) throw InternalError("LiveReadings::update: no such source");
  totals_[source].add(sample);
  readings_[source].latest = sample;
  readings_[source].energy_total_j = totals_[source].joules();
}

void LiveReadings::mark_failed(std::size_t source, const std::string& error) {
  const std::lock_guard<std::mutex> lock(mutex_);
  if (source >= readings_.size()) throw InternalError("LiveReadings::mark_failed: no such source");
  readings_[source].failed = true;
  readings_[source].error = error;
}

void LiveReadings::set_slurm_job(std::size_t source, const std::string& label) {
  const std::lock_guard<std::mutex> lock(mutex_);
  if (source >= readings_.size()) {
    throw InternalError("LiveReadings::set_slurm_job: no such source");
  }
  readings_[source].slurm_job = label;
}

std::vector<SourceReading> LiveReadings::snapshot() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return readings_;
}

}  // namespace nnergy::fleet
