#pragma once

// `nnergy calibrate --kernels`: the kernel model's parameters (kernel/kernel_parameters.h)
// fitted on measured kernels, and scored leave-one-GPU-out: each GPU's kernels predicted with
// parameters fitted on the other GPUs' only, as a GPU that nobody measured would be.

#include <string>
#include <vector>

#include "nnergy/calibration/kernel_scores.h"
#include "nnergy/calibration/kernel_tables.h"
#include "nnergy/core/progress.h"
#include "nnergy/device/device_catalog.h"
#include "nnergy/kernel/kernel_parameters.h"

namespace nnergy::calibration {

/// The fitted parameters and how they did.
struct KernelFit {
  kernel::KernelParameters parameters;     ///< fitted on every row
  std::vector<KernelScore> out_of_sample;  ///< leave-one-GPU-out, per GPU × format × engine
  std::vector<KernelScore> in_sample;      ///< the final fit on its own rows (for contrast)
  int rows = 0;
  int power_rows = 0;
  int attention_rows = 0;
  int collective_rows = 0;
  int moe_rows = 0;
};

/// Rows with power that the power fit uses: sustained kernels of at least this long (NVML
/// averages over 100 ms; shorter kernels' readings mix in the state before them).
inline constexpr double kMinPowerKernelS = 1e-3;
/// The same for the memory-bound decode-attention rows, which are shorter: at least 0.3 ms
/// (1,000 or more back-to-back launches in the 0.3–1 s loops; their readings agree with the
/// few rows of ≥ 1 ms at the same bandwidth to within about 10 %).
inline constexpr double kMinStreamPowerS = 3e-4;

/// The power model's prediction for a measured streaming kernel: its activity from the
/// measured bytes and flops over its measured time.
double stream_power_w(const MeasuredStream& stream, const device::DeviceCatalog& catalog,
                      const kernel::PowerParameters& parameters);

/// Fits the GEMM parameters of every engine × format present in `rows` (Levenberg–Marquardt on
/// ln(predicted/measured)), the power parameters on the rows with power, and scores both
/// leave-one-GPU-out. `progress` is told the fits done.
/// `streams` (memory-bound kernels with power; those of at least kMinStreamPowerS) join the GEMMs
/// in the power fit and its scores.
KernelFit fit_kernels(const std::vector<MeasuredGemm>& rows,
                      const std::vector<MeasuredStream>& streams,
                      const device::DeviceCatalog& catalog, const ProgressCallback& progress = {});

/// Scores of `parameters` on `rows` and `streams`, per GPU × format × engine (and power where
/// measured).
std::vector<KernelScore> score_kernels(const std::vector<MeasuredGemm>& rows,
                                       const std::vector<MeasuredStream>& streams,
                                       const device::DeviceCatalog& catalog,
                                       const kernel::KernelParameters& parameters);

}  // namespace nnergy::calibration
