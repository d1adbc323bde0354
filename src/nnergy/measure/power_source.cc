#include "nnergy/measure/power_source.h"

#include "nnergy/core/error.h"
#include "nnergy/measure/source_factories.h"

namespace nnergy::measure {

SourceRegistry SourceRegistry::standard() {
  SourceRegistry registry;
  registry.add("nvml", "NVIDIA GPUs through NVML (nvml = all, nvml:INDEX = one)",
               open_nvml_sources);
  registry.add("rapl",
               "CPU package/core/dram energy through Linux powercap (rapl = all zones, "
               "rapl:ZONE = one, e.g. rapl:package-0)",
               open_rapl_sources);
  registry.add("synthetic",
               "programmable waveform for tests and demos, e.g. synthetic:constant=250 or "
               "synthetic:steps=100/1,300/0.5,noise=5,seed=1",
               open_synthetic_sources);
  registry.add("replay",
               "replay a recorded trace in real time: replay:PATH (nnergy CSV/JSON or "
               "nvidia-smi CSV log)",
               open_replay_sources);
  return registry;
}

Detection SourceRegistry::open(const std::string& spec) const {
  const auto colon = spec.find(':');
  const std::string kind = spec.substr(0, colon);
  const std::string argument = colon == std::string::npos ? "" : spec.substr(colon + 1);
  return get(kind)(argument);
}

Detection SourceRegistry::detect() const {
  Detection all;
  for (const char* kind : {"nvml", "rapl"}) {
    if (!contains(kind)) continue;
    Detection found = open(kind);
    for (auto& source : found.sources) all.sources.push_back(std::move(source));
    for (auto& u : found.unavailable) all.unavailable.push_back(std::move(u));
    for (auto& w : found.warnings) all.warnings.push_back(std::move(w));
  }
  return all;
}

}  // namespace nnergy::measure
