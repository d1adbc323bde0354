#pragma once

// The physical model of one operator on one device, from first principles and the device's
// (calibrated) efficiencies, no measurements of the network: the roofline time and the archline
// energy of each pass. Every consumer of the analytical figures (the analytical op predictor,
// the optimizer step of a training iteration, the calibration's time model, the learned models'
// analytical features) calls these functions, so there is one model and one rule for which
// units run an operator.

#include <string>
#include <vector>

#include "nnergy/device/device_spec.h"
#include "nnergy/device/operating_point.h"
#include "nnergy/graph/mode.h"
#include "nnergy/graph/op_cost.h"

namespace nnergy::analytical {

/// Predicted time, power and energy of one occurrence of an operation (or of one pass).
struct OpEstimate {
  double time_s = 0;
  double energy_j = 0;
  double power_w = 0;          ///< energy_j / time_s (0 when time_s is 0)
  double forward_time_s = 0;   ///< part of time_s spent in the forward pass
  bool compute_bound = false;  ///< the compute term of the roofline dominated (largest pass)
  bool power_capped = false;   ///< the estimate hit the device's power limit
  /// 1σ uncertainties as the predictor estimates them, same units; 0 = unknown (the analytical
  /// model gives none).
  double time_std_s = 0;
  double power_std_w = 0;
  double energy_std_j = 0;
};

/// What a pass runs at beyond its flops and bytes: for a matrix operator graph::OpCost's
/// reduction length and kernel family and whether it is a gradient pass; for a normalization
/// whether the pass computes statistics of its input.
struct PassTraits {
  double reduction_length = 0;                        ///< K, MACs per output; 0: unknown
  graph::MatrixKind kind = graph::MatrixKind::kGemm;  ///< the kernel family
  bool backward = false;    ///< the data- and weight-gradient pass of a training step
  bool statistics = false;  ///< a normalization pass that reduces its input to statistics
  /// The GEMMs a matrix pass runs (graph::OpCost::forward_gemms or backward_gemms); empty:
  /// not known as GEMMs, the roofline below costs the pass.
  std::vector<graph::GemmDims> gemms = {};

  /// The traits of `cost`'s forward pass (backward false) or gradient pass in `mode`.
  static PassTraits of(const graph::OpCost& cost, graph::Mode mode, bool backward);
};

/// The units that run `op_class` work at `precision`: matrix operators (Conv, Gemm, MatMul) the
/// precision's own (tensor cores for tf32, fp16 and bf16 where the device has them); all others
/// the vector units, fp64 for fp64 and fp32 otherwise.
device::Precision units_of(graph::OpClass op_class, device::Precision precision);

/// Flop/s a pass's compute runs at on `device`: the efficiency of its units
/// (device::Efficiency) times their peak at the clock, times the size and reduction factors,
/// the kernel family's factor (Winograd, grouped) and the gradient passes' factor for matrix
/// work. Throws InvalidInput when the device lacks the units' peak.
double compute_rate(const device::DeviceSpec& device, const graph::PassCost& cost,
                    graph::OpClass op_class, const device::OperatingPoint& point,
                    const PassTraits& traits = {});

/// Time, power and energy of one pass of `op_class` work (also the optimizer step) on `device`.
///
/// A matrix pass whose GEMMs are known (traits.gemms), at a precision the device has matrix
/// units for (fp16, bf16, tf32, fp8, int8), and shaped for them (every product at least 16
/// columns and 16 deep per group), is costed by the kernel model (kernel_pass.h). Otherwise:
///
/// - time: the roofline, t = max(W / (η_c·p_peak·f/f_boost), Q / (η_m·b_peak·s(f))) plus one
///   launch overhead per kernel. The compute term scales with the core clock f; the memory term
///   does not, except that below half the boost clock the SMs issue loads too slowly to keep
///   DRAM busy (s(f) = min(1, 2f/f_boost)). η_c (of the tensor-core peak for matrix work where
///   the device has matrix units, with the size and reduction factors of device::Efficiency),
///   η_m (times statistics_memory_efficiency for a normalization's statistics passes) and the
///   overhead come from the catalog, calibrated where `nnergy calibrate` set them.
/// - energy: the archline, E = W_a·ε_flop·v² + Q·ε_mem + T·π0(f) (Holtmann 2024 Eq. 5), with
///   W_a = W/η the flop slots the units spend (a kernel at η of peak keeps them issuing and
///   stalling for its whole compute time, so power follows activity, not useful flops), and
///   v = V(f)/V(f_boost) from the catalog's DVFS model (P ∝ C·V²·f, Nicolai Eq. 2.1): dynamic
///   energy per flop scales with v², the baseline power splits into the idle power (static) and
///   a clocked part scaling with v²·f/f_boost; κ·π_mem more while the units compute
///   (device::PowerActivity). ε_mem is taken as independent of the core clock (DRAM runs on its
///   own clock).
/// - power: E/T, kept between the idle power and the TDP; above the TDP the device would
///   throttle, so the time is stretched until the power equals the TDP (flagged power_capped).
OpEstimate predict_pass(const device::DeviceSpec& device, const graph::PassCost& cost,
                        graph::OpClass op_class, const device::OperatingPoint& point,
                        const PassTraits& traits = {});

/// One occurrence of an operator of `cost` in `mode`: its forward pass (the inference pass, or
/// the train-mode forward pass), plus its gradient pass in training.
OpEstimate predict_op(const device::DeviceSpec& device, const graph::OpCost& cost, graph::Mode mode,
                      const device::OperatingPoint& point);

/// One line on the model as `device`'s efficiencies and calibration make it: the efficiencies,
/// the regime factors, the launch time, the energy model and where the parameters come from.
std::string describe(const device::DeviceSpec& device);

}  // namespace nnergy::analytical
