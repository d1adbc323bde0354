#pragma once

// Time, board power and energy of one GEMM kernel on a GPU from its datasheet (SM count, peak
// per precision, DRAM bandwidth, clocks, power limit) and the kernel parameters fitted on
// measured GEMMs (kernel/kernel_parameters.h):
//
//   t = t0 + max(t_c, t_m) + β·min(t_c, t_m)  (+ the input-quantization kernel's time)
//
// - t_c: the tiles the library computes, in waves over the SMs, each at the tile's rate:
//   t_c = waves · 2·T_m·T_n·K / (η_c·(A/A_max)^γ · peak/SMs · f/f_boost) · (K+K½)/K,
//   with the tile (T_m × T_n of area A) the one that finishes first among the shapes
//   libraries use (256×128 … 64×64), as their heuristics pick. One row more than a tile
//   multiple adds a row of tiles, and a wave more when they no longer fit.
// - t_m: the bytes read and written once (inputs, weights, outputs) over η_m of the bandwidth.
// - power from the kernel's activity (kernel/kernel_power.h); above the power limit the
//   compute time stretches as the clocks drop.

#include <span>
#include <string>
#include <string_view>

#include "nnergy/device/device_spec.h"
#include "nnergy/kernel/gemm_format.h"
#include "nnergy/kernel/kernel_parameters.h"
#include "nnergy/kernel/kernel_power.h"

namespace nnergy::kernel {

/// C[batch][m×n] = A[batch][m×k] · B[batch][k×n]; B is the weight of a Linear layer.
struct GemmShape {
  double m = 0;
  double n = 0;
  double k = 0;
  double batch = 1;
};

/// What limits a kernel's time.
enum class Bound { kCompute, kMemory, kLatency, kPowerCap, kLink };
/// "compute", "memory", "latency", "power cap", "link".
std::string_view to_string(Bound bound);

/// One kernel's prediction.
struct KernelEstimate {
  double time_s = 0;
  double power_w = 0;          ///< board power while it runs steadily
  double compute_power_w = 0;  ///< the tensor units' share of power_w
  double energy_j = 0;
  double flop_count = 0;  ///< useful flops (2·m·n·k·batch)
  double byte_count = 0;  ///< DRAM bytes (each operand once); a collective's: bytes sent
  double compute_s = 0;   ///< t_c at the clock it runs at
  double memory_s = 0;    ///< t_m
  Bound bound = Bound::kLatency;
  int tile_m = 0;  ///< the tile chosen
  int tile_n = 0;
  double waves = 0;             ///< waves of tiles over the SMs
  double tile_utilisation = 0;  ///< useful share of the tiles' rows × columns
  double wave_utilisation = 0;  ///< tiles / (waves × SMs)
  double clock_mhz = 0;         ///< the clock it runs at (lower when power-capped)
  /// 1σ from the kernel-level leave-one-GPU-out errors, same units; 0 when not calibrated.
  double time_std_s = 0;
  double power_std_w = 0;
  double energy_std_j = 0;
  std::string parameters;  ///< which fitted parameters were used, for notes
};

/// A kernel of `time_s` run at `powered`'s clock and power: its time, clock, power (and the
/// tensor units' share) and energy set, the rest left to the class.
KernelEstimate estimate_at(const PoweredClock& powered, double time_s);

/// Sets `e`'s time, power and energy 1σ from the leave-one-GPU-out spreads: the time's of
/// `time_key` in parameters.time_log_sigma (none when absent), the power's pooled one.
void set_uncertainty(KernelEstimate& e, const KernelParameters& parameters,
                     const std::string& time_key);

/// Predicts `shape` in `format` with `engine`'s kernels on `device` at `clock_mhz` (its boost
/// clock when 0). Throws InvalidInput when the device has no peak for the format's units
/// (naming the formats it can run) or for a non-positive dimension.
KernelEstimate predict_gemm(const device::DeviceSpec& device, const GemmShape& shape,
                            GemmFormat format, const KernelParameters& parameters,
                            const std::string& engine = KernelParameters::kDefaultEngine,
                            double clock_mhz = 0);

/// The GEMM time alone (no power, no cap) with explicit parameters: what the fit evaluates.
double gemm_time_s(const device::DeviceSpec& device, const GemmShape& shape, GemmFormat format,
                   const GemmParameters& p, double clock_mhz);

/// `count` products of the same number of rows `m` (one expert's tokens in a grouped GEMM).
struct GemmGroup {
  double m = 0;
  double count = 1;
};

/// What a grouped GEMM's time is made of, s (bytes in bytes).
struct GroupedGemmTime {
  double total_s = 0;     ///< t0 + max(t_c, t_m) + β·min(t_c, t_m) + the quantization's time
  double compute_s = 0;   ///< t_c: the tiles of all groups in waves over the SMs
  double memory_s = 0;    ///< t_m
  double byte_count = 0;  ///< DRAM bytes: every group's inputs, weights and outputs once
  double waves = 0;
};

/// The time of the products of `groups` (each `count` products of m × k by k × n, its own
/// weights), their tiles scheduled together as one grouped kernel (MoE experts), with explicit
/// parameters; gemm_time_s is the one-group case.
GroupedGemmTime grouped_gemm_time(const device::DeviceSpec& device,
                                  std::span<const GemmGroup> groups, double n, double k,
                                  GemmFormat format, const GemmParameters& p, double clock_mhz);

/// The units `format` runs on on `device`: the format's own, with fp16 for the 16-bit and
/// weight-only formats on GPUs without bf16 units (Volta, Turing).
device::Precision units(const device::DeviceSpec& device, GemmFormat format);

/// Throws InvalidInput when `device` has no units for `format`: "<device> has no <units> units
/// in the catalog, so it cannot run <format> <kernels>; it runs: <formats>".
void check_units(const device::DeviceSpec& device, GemmFormat format, std::string_view kernels);

/// The formats `device` has units for, comma-separated.
std::string formats_of(const device::DeviceSpec& device);

}  // namespace nnergy::kernel
