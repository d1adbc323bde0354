#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "nnergy/core/registry.h"
#include "nnergy/measure/power_sample.h"

namespace nnergy::measure {

/// A live power source: one channel (a GPU, a RAPL zone, a synthetic waveform, a replayed trace).
/// `read` is called from one sampler thread at a time; implementations need not be thread-safe
/// across concurrent `read` calls but must not share unsynchronized state between instances.
class PowerSource {
 public:
  virtual ~PowerSource() = default;
  virtual const SourceInfo& info() const = 0;
  /// Reads the source now. `time_s` is the sampler's steady time of this read (synthetic and
  /// replay sources use it as their clock). Throws DeviceError when the device fails (e.g. a
  /// GPU fell off the bus); the sampler then ends this source's trace and reports the error.
  virtual PowerSample read(double time_s) = 0;
};

/// Why a kind of source is not available here, e.g. {"nvml", "libnvidia-ml.so.1 not found"}.
struct Unavailable {
  std::string source;
  std::string reason;
};

/// Sources found on this machine, plus the reasons the others are not available.
struct Detection {
  std::vector<std::unique_ptr<PowerSource>> sources;
  std::vector<Unavailable> unavailable;
  /// Usable-but-imperfect input, e.g. rows a replayed trace file dropped, with counts.
  std::vector<std::string> warnings;
};

/// Opens every source of one kind that is present for an argument ("1" of "nvml:1"); absence
/// is reported in `Detection::unavailable`, not thrown. Throws InvalidInput for a malformed
/// argument.
using SourceFactory = std::function<Detection(const std::string& argument)>;

/// Builds sources from a specification string ("nvml", "nvml:1", "rapl", "synthetic:...",
/// "replay:PATH"): the source kinds by name (core/registry.h), filled by an explicit call, no
/// static registration.
class SourceRegistry : public Registry<SourceFactory> {
 public:
  SourceRegistry() : Registry("source kind") {}

  /// The registry with nvml, rapl, synthetic and replay.
  static SourceRegistry standard();

  /// Opens the sources of `spec` ("KIND" or "KIND:ARGUMENT"). Throws InvalidInput naming the known
  /// kinds for an unknown kind, and the sources' own InvalidInput for a malformed argument; the
  /// messages say what is wrong, not where (callers prefix the setting and the spec as their
  /// users spell them, e.g. "--source synthetic:x: ").
  Detection open(const std::string& spec) const;
  /// Detects the hardware sources present here (nvml and rapl), reporting the absent ones.
  Detection detect() const;
};

}  // namespace nnergy::measure
