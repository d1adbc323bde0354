#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "nnergy/fleet/listen_address.h"
#include "nnergy/fleet/live_readings.h"
#include "nnergy/fleet/metrics_endpoint.h"
#include "nnergy/fleet/slurm_job_labeler.h"
#include "nnergy/measure/power_source.h"
#include "nnergy/measure/sampler.h"

namespace nnergy::fleet {

/// How a GpuExporter samples and serves.
struct GpuExporterOptions {
  ListenAddress address;
  std::string listen_setting = "--listen";  ///< how messages name the address setting
  double period_s = 1.0;                    ///< time between two reads of one source, s
  /// dcgm-exporter-style job-mapping directory (slurm_job_lookup.h); nullopt: none.
  std::optional<std::filesystem::path> job_mapping_dir;
  double job_refresh_s = 1.0;  ///< how often the slurm_job labels are refreshed, s
  /// Who may connect (access_control_list()'s form); "" for everyone.
  std::string access_control_list;
  /// Asked who owns a job that only a process's environment names (SlurmJobLabeler).
  std::filesystem::path scontrol = "/usr/bin/scontrol";
};

/// A Prometheus exporter: samples `sources` on the measure::Sampler and serves their latest
/// readings at http://ADDRESS/metrics (metric_families). A source that fails (an NVML error, a
/// GPU that fell off the bus) loses its series and the others go on being served; counters never
/// decrease (EnergyTotal). Memory stays flat however long it runs: only the latest sample of
/// each source is kept. Serving runs from construction to destruction; thread-safe.
class GpuExporter {
 public:
  /// Throws InvalidInput naming options.listen_setting when it cannot listen at the address.
  GpuExporter(std::vector<std::unique_ptr<measure::PowerSource>> sources,
              GpuExporterOptions options);
  ~GpuExporter();
  GpuExporter(const GpuExporter&) = delete;
  GpuExporter& operator=(const GpuExporter&) = delete;

  std::string url() const { return endpoint_->url(); }
  std::uint16_t port() const { return endpoint_->port(); }
  std::uint64_t scrapes() const { return endpoint_->scrapes(); }
  /// What a scrape shows now (failed sources marked).
  std::vector<SourceReading> readings() const;

 private:
  std::unique_ptr<LiveReadings> readings_;
  std::unique_ptr<measure::Sampler> sampler_;
  std::unique_ptr<SlurmJobLabeler> labeler_;
  std::unique_ptr<MetricsEndpoint> endpoint_;
};

/// `readings`' snapshot with the failures `sampler` (which feeds it) has seen marked.
std::vector<SourceReading> readings_with_failures(const LiveReadings& readings,
                                                  const measure::Sampler& sampler);

}  // namespace nnergy::fleet
