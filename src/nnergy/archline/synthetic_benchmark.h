#pragma once

#include <cstdint>
#include <vector>

#include "nnergy/archline/archline_model.h"
#include "nnergy/archline/archline_point.h"
#include "nnergy/device/precision.h"

namespace nnergy::archline {

/// What `generate_synthetic_points` produces: the benchmark sweep of seed 003 §3.3 run on an
/// imaginary device that follows Eq. 5 exactly, plus noise on the energy.
struct SyntheticOptions {
  ArchlineModel truth;  ///< parameters and peaks of the imaginary device
  device::Precision precision = device::Precision::kFp32;
  /// Relative standard deviation of the Gaussian noise on E (0.02: 2 %, about NVML's ±5 %
  /// accuracy band taken as 2.5σ).
  double noise = 0.02;
  std::uint64_t seed = 1;
  /// Flop per thread N of the flop and roofline kernels: W = 2N and Q = 2·word per thread
  /// (Eqs. 11, 12), so I = N/word_bytes.
  std::vector<int> fma_per_thread = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024};
  /// Fractions of the device's resident-thread capacity launched.
  std::vector<double> occupancies = {1.0 / 32, 1.0 / 16, 1.0 / 8, 0.25, 0.5, 1.0};
  double batch_time_s = 5;  ///< each point is a batch of launches lasting about this long, s
  bool reference_benchmarks = true;  ///< also baseline, copy and flop points
  /// Fraction of points marked as taken at another clock (admitted = 0), with their energy
  /// scaled by 0.85 as a throttled device would show; exercises R²* (Table 4).
  double off_clock_fraction = 0;
};

/// Synthetic benchmark points. Time follows a roofline whose achievable flop rate and bandwidth
/// fall at low occupancy (min(1, 2·occupancy) of the peak flop rate, min(1, 3·occupancy)·0.9 of
/// the peak bandwidth); E = W·ε_flop + Q·ε_mem + T·π0 times (1 + noise·N(0, 1)). Deterministic
/// for a given seed. Throws InvalidInput for noise < 0, empty sweeps or non-positive parameters.
std::vector<ArchlinePoint> generate_synthetic_points(const SyntheticOptions& options);

}  // namespace nnergy::archline
