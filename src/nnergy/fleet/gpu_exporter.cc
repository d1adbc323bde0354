#include "nnergy/fleet/gpu_exporter.h"

namespace nnergy::fleet {

namespace {

// Samples kept per source by the sampler: the exporter only serves the latest one, which
// LiveReadings holds; the bound keeps memory flat over weeks of serving.
constexpr std::size_t kSamplesInMemory = 4;

}  // namespace

std::vector<SourceReading> readings_with_failures(const LiveReadings& readings,
                                                  const measure::Sampler& sampler) {
  std::vector<SourceReading> snapshot = readings.snapshot();
  for (std::size_t i = 0; i < snapshot.size() && i < sampler.source_count(); ++i) {
    const measure::SourceStatus status = sampler.status(i);
    if (status.failed) {
      snapshot[i].failed = true;
      snapshot[i].error = status.error;
    }
  }
  return snapshot;
}

GpuExporter::GpuExporter(std::vector<std::unique_ptr<measure::PowerSource>> sources,
                         GpuExporterOptions options) {
  std::vector<measure::SourceInfo> infos;
  for (const auto& source : sources) infos.push_back(source->info());
  readings_ = std::make_unique<LiveReadings>(std::move(infos));
  measure::SamplerOptions sampler_options;
  sampler_options.period_s = options.period_s;
  sampler_options.max_samples_in_memory = kSamplesInMemory;
  LiveReadings* readings = readings_.get();
  sampler_options.on_sample = [readings](std::size_t source, const measure::PowerSample& sample) {
    readings->update(source, sample);
  };
  sampler_ = std::make_unique<measure::Sampler>(std::move(sources), sampler_options);
  // Listening is checked before anything is sampled: a bad address costs nothing else.
  endpoint_ = std::make_unique<MetricsEndpoint>(
      options.address, [this] { return readings_with_failures(*readings_, *sampler_); },
      options.listen_setting, options.access_control_list);
  labeler_ = std::make_unique<SlurmJobLabeler>(*readings_, options.job_mapping_dir,
                                               options.job_refresh_s, options.scontrol);
  sampler_->start();
}

GpuExporter::~GpuExporter() {
  // Stop serving first, so that no scrape reads the sampler while it stops.
  endpoint_.reset();
  labeler_.reset();
  sampler_->stop();
}

std::vector<SourceReading> GpuExporter::readings() const {
  return readings_with_failures(*readings_, *sampler_);
}

}  // namespace nnergy::fleet
