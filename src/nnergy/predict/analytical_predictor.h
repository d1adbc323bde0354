#pragma once

#include "nnergy/device/device_spec.h"
#include "nnergy/predict/op_predictor.h"

namespace nnergy::predict {

/// What a pass runs at beyond its flops and bytes: for a matrix operator graph::OpCost's
/// reduction length and kernel family and whether it is a gradient pass; for a normalization
/// whether the pass computes statistics of its input.
struct PassTraits {
  double reduction_length = 0;                        ///< K, MACs per output; 0: unknown
  graph::MatrixKind kind = graph::MatrixKind::kGemm;  ///< the kernel family
  bool backward = false;    ///< the data- and weight-gradient pass of a training step
  bool statistics = false;  ///< a normalization pass that reduces its input to statistics

  /// The traits of `cost`'s forward pass (backward false) or gradient pass in `mode`.
  static PassTraits of(const graph::OpCost& cost, Mode mode, bool backward);
};

/// Time, power and energy of one pass from first principles, no measurements of the network:
///
/// - time: the roofline, t = max(W / (η_c·p_peak·f/f_boost), Q / (η_m·b_peak·s(f))) plus one
///   launch overhead per kernel. The compute term scales with the core clock f; the memory term
///   does not, except that below half the boost clock the SMs issue loads too slowly to keep
///   DRAM busy (s(f) = min(1, 2f/f_boost)). η_c (of the tensor-core peak for matrix work where
///   the device has matrix units, with the size and reduction factors of device::Efficiency),
///   η_m (times statistics_memory_efficiency for a normalization's statistics passes) and the
///   overhead come from the catalog, calibrated where `nnergy calibrate` set them.
/// - energy: the archline, E = W_a·ε_flop·v² + Q·ε_mem + T·π0(f) (seed 003 Eq. 5), with
///   W_a = W/η the flop slots the units spend (a kernel at η of peak keeps them issuing and
///   stalling for its whole compute time, so power follows activity, not useful flops), and
///   v = V(f)/V(f_boost) from the catalog's DVFS model (P ∝ C·V²·f, seed 000 Eq. 2.1):
///   dynamic energy per flop scales with v², the baseline power splits into the idle power
///   (static) and a clocked part scaling with v²·f/f_boost. ε_mem is taken as independent of
///   the core clock (DRAM runs on its own clock).
/// - power: E/T, kept between the idle power and the TDP; above the TDP the device would
///   throttle, so the time is stretched until the power equals the TDP (flagged power_capped).
///
/// Matrix operators (Conv, Gemm, MatMul) use the precision's peak (tensor cores for tf32, fp16,
/// bf16 where the device has them); all others use the vector peak (fp64 for fp64, fp32
/// otherwise).
class AnalyticalPredictor : public OpPredictor {
 public:
  /// Keeps a copy of `device`.
  explicit AnalyticalPredictor(device::DeviceSpec device);

  std::string name() const override { return "analytical"; }
  std::string description() const override;
  OpEstimate predict(const OpQuery& query) const override;
  /// e^σ − 1 of the device's calibration (device::CalibrationInfo::time_log_sigma).
  double network_relative_time_std() const override;
  /// e^σ − 1 of the device's power calibration (device::PowerActivity::power_log_sigma).
  double network_relative_power_std() const override;

  /// One pass of `op_class` work at `point` (also used for the optimizer step); `traits` says
  /// what kind of matrix or normalization pass it is (PassTraits::of; default: neither).
  OpEstimate predict_pass(const graph::PassCost& cost, graph::OpClass op_class,
                          const OperatingPoint& point, const PassTraits& traits = {}) const;
  /// Flop/s the pass's compute runs at: the efficiency of its units (device::Efficiency) times
  /// their peak at the clock, times the size and reduction factors, the kernel family's factor
  /// (Winograd, grouped) and the gradient passes' factor for matrix work. Throws InvalidInput when
  /// the device lacks the units' peak.
  double compute_rate(const graph::PassCost& cost, graph::OpClass op_class,
                      const OperatingPoint& point, const PassTraits& traits = {}) const;

  const device::DeviceSpec& device() const { return device_; }

 private:
  device::DeviceSpec device_;
};

}  // namespace nnergy::predict
