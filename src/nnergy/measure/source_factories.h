#pragma once

#include <string>

#include "nnergy/measure/power_source.h"

namespace nnergy::measure {

/// NVML GPUs: argument "" for every GPU, or a GPU index. The library is
/// `$NNERGY_NVML_LIBRARY` when set, else libnvidia-ml.so.1 (nvml_source.cc).
Detection open_nvml_sources(const std::string& argument);
/// RAPL zones under `$NNERGY_POWERCAP_ROOT` (default /sys/class/powercap): argument "" for all
/// zones, or a zone name such as "package-0" (rapl_source.cc).
Detection open_rapl_sources(const std::string& argument);
/// A programmable waveform (synthetic_source.cc); see its header for the argument grammar.
Detection open_synthetic_sources(const std::string& argument);
/// Replays every trace of a recorded file in real time (replay_source.cc); argument: the path.
Detection open_replay_sources(const std::string& argument);

}  // namespace nnergy::measure
