#pragma once

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "nnergy/archline/archline_point.h"
#include "nnergy/device/precision.h"

namespace nnergy::archline {

/// What `run_benchmarks` measures: the sweep of seed 003 §3.3 on one GPU.
struct BenchmarkRunOptions {
  int gpu_index = 0;  ///< CUDA device ordinal (and NVML index)
  std::vector<device::Precision> precisions = {device::Precision::kFp32};
  /// Multiply-adds per thread N of the flop and roofline kernels; W = 2N flop per thread and the
  /// intensity is N/word_bytes (compiled instantiations: 1, 2, 4, ..., 1024).
  std::vector<int> fma_per_thread = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024};
  /// Fractions of the resident-thread capacity (SMs × max threads per SM) launched.
  std::vector<double> occupancies = {1.0 / 32, 1.0 / 8, 0.25, 0.5, 1.0};
  double batch_time_s = 3;  ///< length of each batch of launches, s (well above NVML's 1 s)
  bool reference_benchmarks = true;  ///< also baseline, copy and flop (Algs. 1–3)
  /// Points whose dominant SM clock differs from this (MHz) are not admitted (§3.1.2); default:
  /// the highest SM clock seen during the warm-up.
  std::optional<double> reference_sm_clock_mhz;
  double clock_tolerance_mhz = 15;                   ///< one clock step
  std::function<void(const std::string&)> progress;  ///< one line per point, may be empty
};

/// A finished sweep.
struct BenchmarkRun {
  std::vector<ArchlinePoint> points;
  /// device name, uuid, driver, reference clock, power limit, energy method, ... for the CSV's
  /// context block.
  std::vector<std::pair<std::string, std::string>> context;
};

/// True when this build has the CUDA kernels (a CUDA compiler was found; NNERGY_WITH_CUDA).
bool cuda_kernels_built();

/// Runs the microbenchmarks with the measurement loop of seed 003 Alg. 5 (CUDA events around a
/// batch of launches, NVML polled meanwhile, a random workload between points). Throws
/// DeviceError when the build has no CUDA kernels ("built without CUDA kernels; ..."), when no
/// GPU or NVML is present, or a CUDA call fails; InvalidInput for bad options.
BenchmarkRun run_benchmarks(const BenchmarkRunOptions& options);

}  // namespace nnergy::archline
