#pragma once

#include <prometheus/metric_family.h>

#include <string>
#include <vector>

#include "nnergy/fleet/live_readings.h"

namespace nnergy::fleet {

/// The Prometheus metrics of `readings`, in base units (docs/fleet.md lists them):
///
///   GPUs (source kinds "gpu", and "synthetic"/"replay", which stand in for one), labels
///   gpu (the NVML index, or the source id), uuid, name, and slurm_job where known:
///     nnergy_gpu_energy_joules_total   counter, J (the energy counter, else integrated power)
///     nnergy_gpu_power_watts           gauge, W
///     nnergy_gpu_sm_clock_hertz        gauge, Hz
///     nnergy_gpu_memory_clock_hertz    gauge, Hz
///     nnergy_gpu_temperature_celsius   gauge, °C
///     nnergy_gpu_throttle_reasons      gauge, NVML clock-event reason bits
///     nnergy_gpu_throttled             gauge, 1 when a reason holds the clock down, else 0
///   RAPL zones (every other kind), label zone ("package-0", "package-0/dram"):
///     nnergy_cpu_energy_joules_total   counter, J
///     nnergy_cpu_power_watts           gauge, W
///   Every source, label source (its id):
///     nnergy_source_up                 gauge, 1 while it is read, 0 once it failed
///
/// A failed source, and a reading the source does not have, has no series. Pure function.
std::vector<prometheus::MetricFamily> metric_families(const std::vector<SourceReading>& readings);

/// Whether a source of `kind` is exported with the GPU metrics.
bool is_gpu_like(const std::string& kind);

}  // namespace nnergy::fleet
