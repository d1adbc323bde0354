#pragma once

// Fitting the free parameters of the analytical time model (device::CalibratedParameters: per
// architecture generation the efficiencies of the vector units, the matrix units and memory;
// for all GPUs the kernel launch time, the size and reduction factors, the convolution regimes,
// eager PyTorch's training host factor and the rate of a pageable input copy; per host machine
// its launch time) to measured whole-network times, and cross-validating the fit by leaving
// out one GPU or one source at a time.

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "nnergy/device/calibrated_parameters.h"
#include "nnergy/device/device_catalog.h"
#include "nnergy/network/time_evaluation.h"

namespace nnergy::calibration {

/// How the fit treats thin data.
struct CalibrationOptions {
  /// A generation with fewer measurements is not fitted (its devices are transferred).
  std::size_t min_generation_records = 20;
  /// Fewer matrix-unit (tf32/fp16/bf16) measurements: the generation's tensor η is not fitted.
  std::size_t min_tensor_records = 10;
  /// Fewer measurements of a host machine (host_of): its launch time is not fitted.
  std::size_t min_host_records = 10;
  /// Weight of the priors' residuals ((θ − θ₀)/σ in logit or log space); 1: weak priors that
  /// only decide parameters the measurements leave open.
  double prior_weight = 1;
  /// The host machines whose launch time becomes `predict`'s default, the first fitted one:
  /// eager PyTorch 2 on a current server (nnergy's H100 campaign), else the DGX A100 of two
  /// published sources (older PyTorch).
  std::vector<std::string> host_launch_hosts = {"PyTorch 2.11 on a 16-core H100 server (2026)",
                                                "DGX A100"};
  /// σ, in logit space, of the prior that draws a generation's memory efficiency towards the
  /// bandwidth its GPUs' copy kernels reached (BandwidthAnchor).
  double bandwidth_anchor_sigma = 0.3;
};

/// The share of a GPU's datasheet bandwidth a streaming copy kernel reached, measured by a
/// microbenchmark (a grade C record of the corpus): where a fitted generation's GPUs have such
/// measurements, the prior of its memory efficiency is their mean instead of the nominal 80 %.
/// Whole-network times alone leave that efficiency poorly identified: kernels the model does
/// not yet place (depthwise convolutions, say) can pull it far below what a streaming kernel
/// reaches, and then every large elementwise operator comes out too slow.
struct BandwidthAnchor {
  std::string id;         ///< the record's id
  std::string device_id;  ///< catalog id of the GPU
  double fraction = 0;    ///< achieved / datasheet bandwidth, (0, 1)
};

/// The part of a measurement's source before " (" (e.g. "github:owner/repo").
std::string source_key(const std::string& source);

/// The machine that ran `m`, whose CPU and framework set its host launch time: m.host where the
/// corpus names it (e.g. "DGX A100"), else "<source key> on <device id>".
std::string host_of(const network::NetworkTimeMeasurement& m);

/// A fit and what it left out.
struct TimeFit {
  device::CalibratedParameters parameters;
  std::vector<std::string> notes;  ///< measurements left out and why, generations not fitted
  std::size_t fitted_records = 0;  ///< measurements the fit used
  double rms_log_error = 0;        ///< in-sample √mean ln²(predicted/measured)
  int iterations = 0;              ///< Levenberg–Marquardt iterations
};

/// Fits the parameters to the measurements `use` (indices into `prepared`) by Levenberg–Marquardt
/// on ln(predicted/measured), with weak priors that keep unidentified parameters at nominal
/// values, and the memory efficiency of a generation with `anchors` of its GPUs drawn towards
/// their mean; each device's datasheet comes from `catalog`. `corpus` names the measurements.
TimeFit fit_times(const network::PreparedTimes& prepared, const std::vector<std::size_t>& use,
                  const device::DeviceCatalog& catalog, const std::string& corpus,
                  const CalibrationOptions& options = {},
                  const std::vector<BandwidthAnchor>& anchors = {});

/// Predictions of the measurements `use` with `parameters` applied to `catalog`'s devices
/// (transferred where their generation was not fitted); a measurement's host launch time is its
/// host machine's (host_of), else the mean of the fitted machines of its source (a GPU left out
/// with its machine), else parameters.host_launch_s, times host_launch_training_factor for an eager
/// PyTorch training iteration; a measurement that includes the copy of its inputs copies them at
/// parameters.input_copy_bytes_per_s (else network::kNominalInputCopyBytesPerS).
std::vector<network::EvaluatedTime> predict_with(const network::PreparedTimes& prepared,
                                                 const std::vector<std::size_t>& use,
                                                 const device::DeviceCatalog& catalog,
                                                 const device::CalibratedParameters& parameters);

/// Leave-one-group-out cross-validation: for each value of `group`, fits on the measurements of
/// the other values, and the anchors of the other GPUs than theirs, and predicts those of this
/// one. Every prediction is out of sample. The folds run on up to `threads` threads (0: the
/// hardware's).
std::vector<network::EvaluatedTime> cross_validate(
    const network::PreparedTimes& prepared, const device::DeviceCatalog& catalog,
    const std::function<std::string(const network::NetworkTimeMeasurement&)>& group,
    const CalibrationOptions& options = {}, unsigned threads = 0,
    const std::vector<BandwidthAnchor>& anchors = {});

/// The whole calibration: the fit on every measurement, its leave-one-GPU-out and
/// leave-one-source-out cross-validations, and the uncertainties (time_log_sigma) set from the
/// leave-one-GPU-out residuals: per generation from its GPUs, and for transferred devices from
/// the GPUs that were alone in their generation.
struct Calibration {
  TimeFit fit;
  std::vector<network::EvaluatedTime> leave_one_gpu_out;
  std::vector<network::EvaluatedTime> leave_one_source_out;
  std::vector<network::EvaluatedTime> in_sample;
};
Calibration calibrate(const network::PreparedTimes& prepared, const device::DeviceCatalog& catalog,
                      const std::string& corpus, const CalibrationOptions& options = {},
                      unsigned threads = 0, const std::vector<BandwidthAnchor>& anchors = {});

}  // namespace nnergy::calibration
