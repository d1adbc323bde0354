#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "nnergy/device/precision.h"

namespace nnergy::device {

/// Archline energy parameters of one precision (seed 003 Eq. 5: E = W·ε_flop + Q·ε_mem + T·π0),
/// valid at the boost clock.
struct ArchlineParameters {
  double eps_flop_j = 0;          ///< energy per flop, J (published in pJ)
  double eps_mem_j_per_byte = 0;  ///< energy per DRAM byte, J/B (published in pJ/B)
  double pi0_w = 0;               ///< baseline (constant) power, W
  std::string source;             ///< where the values come from
  bool estimated = true;          ///< false only for measured, published values
  /// Peak flop/s the source used for its derived quantities (π_flop, η_flop, B_τ; seed 003
  /// Tables 7, 9, 11) when it differs from the datasheet peak; absent: use the device's peak.
  std::optional<double> reference_peak_flop_per_s;
  /// Bandwidth the source used for π_mem and B_τ, B/s; absent: use the device's bandwidth.
  std::optional<double> reference_bandwidth_byte_per_s;
};

/// Core clock range of a device, MHz.
struct ClockRange {
  double min_mhz = 0;
  double base_mhz = 0;
  double boost_mhz = 0;
  double step_mhz = 15;
};

/// Voltage–frequency model used to scale energy with the core clock: the voltage is flat at
/// `v_min_ratio`·V_max up to `knee_mhz` and rises linearly to V_max at the boost clock.
struct DvfsModel {
  double v_min_ratio = 0.7;
  double knee_mhz = 0;
};

/// How close real kernels come to the datasheet peaks.
///
/// A matrix kernel (convolution, GEMM) of W flops and reduction length K (multiply-accumulates
/// per output element) runs at η·peak·s·k with the size factor s = x/(1+x), x = W/(SMs·w½) (a
/// small kernel fills few tiles and waves of the SMs) and the reduction factor k = K/(K+K½)
/// (grouped and depthwise convolutions reuse little data per output).
struct Efficiency {
  double compute = 0.6;             ///< η of the vector (CUDA-core) peak, large conv/GEMM kernels
  double memory = 0.85;             ///< fraction of peak bandwidth streaming kernels reach
  double kernel_overhead_s = 4e-6;  ///< GPU launch and dispatch time per kernel, s
  /// η of the matrix-unit (tensor-core) peak for tf32/fp16/bf16; absent: `compute`.
  std::optional<double> tensor;
  /// η of the matrix-unit peak of one precision where it differs from `tensor` (the LLM
  /// calibration fits 16-bit and 8-bit GEMMs apart); empty: `tensor` for all.
  std::map<Precision, double> tensor_by_precision;
  double work_half_flop_per_sm = 0;  ///< w½, flop per SM; 0: no size effect
  double reduction_half = 0;         ///< K½, multiply-accumulates per output; 0: no effect
  /// Dense 3×3 stride-1 convolutions on the CUDA cores (not the matrix units) run this many
  /// times faster than their flop count at `compute` says: cuDNN's Winograd and FFT algorithms
  /// do fewer multiplications. 1: no effect.
  double winograd_speedup = 1;
  /// Grouped convolutions (graph::MatrixKind::kGroupedConv) reach this fraction of the rate
  /// a dense convolution of the same size reaches. 1: no effect.
  double grouped_conv_efficiency = 1;
  /// Gradient passes of matrix operators (data and weight gradients) reach this fraction of the
  /// rate their forward pass reaches. 1: no effect.
  double backward_matrix_efficiency = 1;
  /// A convolution on matrix units, costed by the kernel model as an implicit GEMM
  /// (analytical/kernel_pass.h), takes this many times the GEMM's time: cuDNN's convolution
  /// kernels (layouts, im2col on the fly, small channel counts) against the Linear-layer GEMMs
  /// the model was fitted on. Fitted on whole-network times; 1: the GEMM's own time.
  double convolution_time_scale = 1;
  /// Normalization passes that compute statistics of their input (BatchNorm in training,
  /// LayerNorm, InstanceNorm, GroupNorm: graph::OpCost::statistics) reach this fraction of the
  /// bandwidth streaming kernels reach (`memory`): a reduction per channel or row, then the
  /// normalization. 1: no effect.
  double statistics_memory_efficiency = 1;
};

/// Power real kernels draw beyond the archline's flop and DRAM terms. The archline's ε_flop comes
/// from microbenchmarks whose operands stay in registers; a convolution or GEMM also moves its
/// operands through shared memory, L1 and L2 while its arithmetic units are busy.
struct PowerActivity {
  /// κ: while a kernel's arithmetic units are busy (its compute time), the board draws κ·π_mem
  /// more, π_mem = ε_mem × peak bandwidth (the memory power at full DRAM bandwidth), scaled
  /// with V² and the clock like the flop power; 0: the archline alone.
  double operand_share = 0;
  /// The matrix units' flop power at a tensor precision's peak (tf32, fp16, bf16, ...), as a
  /// multiple of the fp32 units' flop power at the fp32 peak: ε_flop,p = ε_flop,fp32 ×
  /// peak_fp32/peak_p × this. Absent: 1 (the same flop power, the uncalibrated assumption).
  std::map<Precision, double> tensor_flop_power;
  /// "fitted on N published average powers (…)"; empty: not calibrated (κ = 0).
  std::string provenance;
  /// 1σ of ln(measured/predicted) of average power, out of sample; 0: unknown.
  double power_log_sigma = 0;
};

/// A 1σ spread of ln(measured/predicted) as a relative ±: e^σ − 1 (0.25 for ±25 %).
double relative_spread(double log_sigma);

/// Where a device's efficiencies come from when `nnergy calibrate` set them
/// (data/calibration/calibrated.json).
struct CalibrationInfo {
  /// The generation whose fitted efficiencies the device takes: its own, or the one they were
  /// transferred from (e.g. "Ampere" for an H100); empty: not calibrated.
  std::string from_generation;
  /// "calibrated on N measured whole-network times of <generation> GPUs (…)" or "transferred from
  /// <generation> (…)"; empty: the catalog's own estimates, not calibrated.
  std::string provenance;
  bool transferred = false;  ///< the device's generation had no measurements of its own
  /// 1σ of ln(measured/predicted) of whole-network times, out of sample (leave-one-GPU-out);
  /// 0: unknown.
  double time_log_sigma = 0;
  /// The same spread as a relative ± (relative_spread).
  double relative_time_std() const { return relative_spread(time_log_sigma); }
};

/// A GPU's links to other GPUs, as its datasheet gives them (total bidirectional bandwidths).
struct Interconnect {
  /// The GPU-to-GPU fabric (NVLink/NVSwitch, Infinity Fabric); empty name: none.
  std::string scale_up_name;
  double scale_up_bidirectional_byte_per_s = 0;
  /// GPUs one scale-up domain connects all-to-all (8 on an HGX board, 72 in a GB200 NVL72, 2
  /// for an NVLink bridge); 0: no scale-up fabric.
  int scale_up_domain_gpus = 0;
  int pcie_generation = 0;
  double pcie_bidirectional_byte_per_s = 0;
  std::string source;
  bool known() const { return scale_up_domain_gpus > 0 || pcie_bidirectional_byte_per_s > 0; }
};

/// One GPU (or accelerator) of the device catalog. Peaks are at the boost clock.
struct DeviceSpec {
  std::string id;  ///< catalog key, e.g. "a100-40gb"
  std::vector<std::string> aliases;
  std::string name;  ///< marketing name, e.g. "NVIDIA A100 SXM4 40GB"
  std::string vendor;
  std::string architecture;
  int release_year = 0;
  double memory_gib = 0;
  std::string memory_type;  ///< e.g. "HBM3", "GDDR6"; empty: not given
  int sm_count = 0;         ///< streaming multiprocessors (compute units)
  /// Exponentials one SM's special-function units compute per clock (a softmax's rate): 16,
  /// twice that on Blackwell Ultra (B300, GB300).
  int exp_per_clock_per_sm = 16;
  std::map<Precision, double> peak_flop_per_s;  ///< dense peaks at boost clock, flop/s
  double memory_bandwidth_byte_per_s = 0;
  double tdp_w = 0;   ///< board power limit, W
  double idle_w = 0;  ///< idle board power, W
  ClockRange clock;
  DvfsModel dvfs;
  Efficiency efficiency;
  bool efficiency_given = false;  ///< the catalog file set "efficiency" (calibration keeps it)
  CalibrationInfo calibration;
  PowerActivity power_activity;                      ///< set by the calibration (apply_calibration)
  std::map<Precision, ArchlineParameters> archline;  ///< as given in the catalog file
  Interconnect interconnect;                         ///< absent in the file: unknown
  std::vector<std::string> estimated_fields;         ///< fields that are estimates
  std::string sources;

  /// Peak flop/s of `precision`, if the device has it.
  std::optional<double> peak(Precision precision) const;
  /// True when matrix work at `precision` runs on matrix units (tensor cores): a tf32, fp16 or
  /// bf16 peak above 2.5× the fp32 peak (a Pascal GeForce's fp16, computed in fp32, is not); an
  /// fp8, fp4 or int8 peak (those exist only as matrix units).
  bool has_matrix_units(Precision precision) const;
  /// Architecture generation: the first word of `architecture` ("Ampere GA100" → "Ampere").
  std::string generation() const;
  /// Archline parameters of `precision`: the catalog's, or derived from fp32 (same flop power
  /// at that precision's peak; marked estimated) when the catalog has none for it.
  ArchlineParameters archline_for(Precision precision) const;
  /// The selectable core clocks: min to boost in steps, boost included, MHz.
  std::vector<double> supported_clocks_mhz() const;
  /// Throws InvalidInput naming `flag` when `clock_mhz` is outside [min, boost].
  void check_clock(double clock_mhz, const std::string& flag) const;
  /// V(clock)/V(boost) from the DVFS model: `v_min_ratio` up to the knee, then linear to 1.
  double relative_voltage(double clock_mhz) const;
  /// True when `field` (e.g. "idle_w", "archline.fp32") is listed as estimated.
  bool is_estimated(const std::string& field) const;
};

}  // namespace nnergy::device
