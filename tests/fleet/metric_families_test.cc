// The exporter's metrics: names, units, labels, and absent series for failed sources.
#include "nnergy/fleet/metric_families.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <prometheus/text_serializer.h>

namespace nnergy::fleet {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

SourceReading gpu_reading(const std::string& id, double energy_j) {
  SourceReading r;
  r.info.id = id;
  r.info.kind = "gpu";
  r.info.name = "NVIDIA H100 80GB HBM3";
  r.info.uuid = "GPU-1234";
  measure::PowerSample s;
  s.power_w = 312.5;
  s.sm_clock_mhz = 1410;
  s.memory_clock_mhz = 2619;
  s.temperature_c = 61;
  s.throttle_reasons = 0x4;  // sw_power_cap
  r.latest = s;
  r.energy_total_j = energy_j;
  return r;
}

std::string exposition(const std::vector<SourceReading>& readings) {
  return prometheus::TextSerializer().Serialize(metric_families(readings));
}

TEST(PrometheusMetrics, GpuSeriesInBaseUnitsWithLabels) {
  SourceReading gpu = gpu_reading("nvml:0", 1234.5);
  gpu.slurm_job = "42";
  const std::string text = exposition({gpu});
  EXPECT_THAT(text, HasSubstr("# TYPE nnergy_gpu_energy_joules_total counter"));
  EXPECT_THAT(text, HasSubstr("nnergy_gpu_energy_joules_total{gpu=\"0\",uuid=\"GPU-1234\","
                              "name=\"NVIDIA H100 80GB HBM3\",slurm_job=\"42\"} 1234.5"));
  EXPECT_THAT(text, HasSubstr("nnergy_gpu_power_watts{gpu=\"0\""));
  EXPECT_THAT(text, HasSubstr("} 312.5"));
  EXPECT_THAT(text, HasSubstr("nnergy_gpu_sm_clock_hertz{gpu=\"0\",uuid=\"GPU-1234\",name=\"NVIDIA "
                              "H100 80GB HBM3\",slurm_job=\"42\"} 1410000000"));
  EXPECT_THAT(text, HasSubstr("nnergy_gpu_throttle_reasons{"));
  EXPECT_THAT(text, HasSubstr("nnergy_gpu_throttled{gpu=\"0\",uuid=\"GPU-1234\",name=\"NVIDIA "
                              "H100 80GB HBM3\",slurm_job=\"42\"} 1"));
  EXPECT_THAT(text, HasSubstr("nnergy_source_up{source=\"nvml:0\"} 1"));
}

TEST(PrometheusMetrics, UnknownJobLeavesTheLabelOut) {
  EXPECT_THAT(exposition({gpu_reading("nvml:0", 1)}), Not(HasSubstr("slurm_job")));
}

TEST(PrometheusMetrics, RaplZonesAreCpuEnergy) {
  SourceReading zone;
  zone.info.id = "rapl:package-0";
  zone.info.kind = "cpu-package";
  zone.info.name = "package-0";
  measure::PowerSample s;
  s.power_w = 40;
  s.energy_j = 5000;
  zone.latest = s;
  zone.energy_total_j = 5000;
  const std::string text = exposition({zone});
  EXPECT_THAT(text, HasSubstr("nnergy_cpu_energy_joules_total{zone=\"package-0\"} 5000"));
  EXPECT_THAT(text, HasSubstr("nnergy_cpu_power_watts{zone=\"package-0\"} 40"));
  EXPECT_THAT(text, Not(HasSubstr("nnergy_gpu_")));
}

TEST(PrometheusMetrics, FailedSourceHasNoSeriesButIsReportedDown) {
  SourceReading lost = gpu_reading("nvml:1", 99);
  lost.failed = true;
  lost.error = "nvmlDeviceGetTotalEnergyConsumption: GPU is lost";
  const std::string text = exposition({gpu_reading("nvml:0", 1), lost});
  EXPECT_THAT(text, HasSubstr("nnergy_gpu_energy_joules_total{gpu=\"0\""));
  EXPECT_THAT(text, Not(HasSubstr("gpu=\"1\"")));
  EXPECT_THAT(text, HasSubstr("nnergy_source_up{source=\"nvml:1\"} 0"));
}

TEST(PrometheusMetrics, ReadingsASourceLacksHaveNoSeries) {
  SourceReading bare;
  bare.info.id = "synthetic";
  bare.info.kind = "synthetic";
  measure::PowerSample s;
  s.power_w = 250;
  bare.latest = s;
  bare.energy_total_j = 10;
  const std::string text = exposition({bare});
  EXPECT_THAT(text, HasSubstr("nnergy_gpu_energy_joules_total{gpu=\"synthetic\""));
  EXPECT_THAT(text, Not(HasSubstr("clock_hertz")));
  EXPECT_THAT(text, Not(HasSubstr("temperature")));
}

}  // namespace
}  // namespace nnergy::fleet
