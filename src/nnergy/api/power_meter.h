#pragma once

#include <cstddef>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "nnergy/core/setting_name.h"
#include "nnergy/measure/measurement_window.h"
#include "nnergy/measure/power_source.h"

namespace nnergy::api {

/// The power sources to sample: with `sources` empty, those detected here (NVML GPUs, RAPL zones;
/// the absent kinds in Detection::unavailable); else every named source ("nvml[:INDEX]",
/// "rapl[:ZONE]", "synthetic:SPEC", "replay:PATH"; measure::SourceRegistry), each of which must be
/// present. Throws InvalidInput for a malformed or unknown spec, DeviceError naming the `source`
/// setting (as `names` spells it) for a named source that is not available here.
measure::Detection open_power_sources(const std::vector<std::string>& sources, SettingNames names);

/// Checks a sampling interval, ms: 1 to 60000. Throws InvalidInput naming `interval_ms`.
void check_interval_ms(double interval_ms, SettingNames names);

/// The warning for a power trace `trace` (written under `setting`) that will hold no power
/// samples because no source of `infos` reports power; "" when one does.
std::string powerless_trace_warning(const std::vector<measure::SourceInfo>& infos,
                                    const std::string& setting, const std::filesystem::path& trace);

/// What a PowerMeter samples.
struct PowerMeterRequest {
  /// Power sources as for open_power_sources; empty: detect NVML and RAPL.
  std::vector<std::string> sources;
  double interval_ms = 20;  ///< sampling period, ms; 1 to 60000
  /// Also writes every sample to this power trace (nnergy CSV, or JSON for a .json path; the
  /// format of `nnergy monitor -o`), completed by stop(); empty: none.
  std::filesystem::path trace_file;
  /// The command line recorded in the trace's context block.
  std::string command_line;
  /// How messages name the settings above (flags for the CLI, keywords for Python).
  SettingNames names = SettingNames::kKeyword;
};

/// In-process measurement windows: the sampler and the windows of `nnergy monitor`
/// (measure::Sampler, measure::Meter) without a child command, for a program that measures parts
/// of itself (the Python package's Monitor). Sampling runs from construction until stop() or
/// destruction. Windows are opened with begin() and closed with end(); they may nest and
/// overlap. Thread-safe: any thread may open and close windows, also concurrently.
class PowerMeter {
 public:
  /// Opens the sources (open_power_sources) and starts sampling. Throws InvalidInput for an
  /// interval out of range or a malformed source, DeviceError for a named source that is absent.
  explicit PowerMeter(const PowerMeterRequest& request);
  ~PowerMeter();  ///< stops sampling
  PowerMeter(const PowerMeter&) = delete;
  PowerMeter& operator=(const PowerMeter&) = delete;

  /// Opens a window now and returns its handle; `name` labels it (end_named finds it by name).
  /// Throws InvalidInput after stop().
  std::size_t begin(const std::string& name = "");
  /// Closes the open window `handle` now and returns every source's statistics (waits for a
  /// sample at or after the end, at most two sampling periods plus 50 ms, so that the energy
  /// counter brackets the window). Throws InvalidInput for a handle that is not open (never
  /// opened, or already closed) and for invalid `options`.
  measure::Measurement end(std::size_t handle, const measure::WindowOptions& options = {});
  /// Closes the most recently opened window that is still open under `name`. Throws InvalidInput
  /// naming the open windows when none is open under `name`.
  measure::Measurement end_named(const std::string& name,
                                 const measure::WindowOptions& options = {});
  /// The name a window was opened with; "" for an unknown handle.
  std::string name_of(std::size_t handle) const;

  /// Takes a last sample of every source and stops sampling; completes the trace file. Windows
  /// still open can be closed afterwards (their ends are then after the last sample).
  /// Idempotent. Throws InvalidInput naming `trace_file` when the trace cannot be written.
  void stop();

  /// The sources sampled, in order (also the order of Measurement::sources).
  std::vector<measure::SourceInfo> sources() const;
  /// Detected kinds that are absent here, with reasons (empty when sources were named).
  const std::vector<measure::Unavailable>& unavailable() const;
  /// Usable-but-imperfect input (e.g. rows a replayed trace dropped).
  const std::vector<std::string>& warnings() const;
  double interval_ms() const;
  /// Sampler steady time now, s (the time base of Measurement::begin_s and end_s).
  double now_s() const;
  /// UNIX time of steady time 0, s.
  double epoch_offset_s() const;
  /// CPU time of the sampler threads so far, s.
  double sampler_cpu_time_s() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace nnergy::api
