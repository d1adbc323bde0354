#pragma once

#include "nnergy/device/device_spec.h"
#include "nnergy/device/precision.h"

namespace nnergy::archline {

/// The energy roofline ("archline") of one device and precision: the three fitted parameters of
/// seed 003 Eq. 5 plus the peaks they are read against, and every quantity derived from them
/// (§3.2, Eqs. 8–10, 13; Tables 7, 9, 11). SI units throughout; value type, thread-safe.
struct ArchlineModel {
  double eps_flop_j = 0;            ///< ε_flop, J/flop
  double eps_mem_j_per_byte = 0;    ///< ε_mem, J/B
  double pi0_w = 0;                 ///< π0, W
  double peak_flop_per_s = 0;       ///< peak arithmetic throughput, flop/s
  double bandwidth_byte_per_s = 0;  ///< peak DRAM bandwidth, B/s
  double word_bytes = 4;            ///< bytes of one word of the precision (4 fp32, 8 fp64)

  /// The catalog's parameters of `precision` for `device`, with the source's reference peaks
  /// where the catalog gives them (else the datasheet peaks). Throws InvalidInput when the
  /// device has no peak for `precision`.
  static ArchlineModel from_device(const device::DeviceSpec& device, device::Precision precision);

  /// τ_flop = 1/peak, s/flop.
  double time_per_flop_s() const { return 1 / peak_flop_per_s; }
  /// τ_mem = 1/bandwidth, s/B.
  double time_per_byte_s() const { return 1 / bandwidth_byte_per_s; }
  /// Time balance B_τ = τ_mem/τ_flop = peak/bandwidth, flop/B.
  double time_balance_flop_per_byte() const { return peak_flop_per_s / bandwidth_byte_per_s; }
  /// Energy balance B_ε = ε_mem/ε_flop, flop/B (§3.2; B_ε at π0 = 0).
  double energy_balance_flop_per_byte() const { return eps_mem_j_per_byte / eps_flop_j; }
  /// Baseline energy per flop ε_0,flop = τ_flop·π0, J/flop (Eq. 13).
  double baseline_energy_per_flop_j() const { return time_per_flop_s() * pi0_w; }
  /// Effective energy per flop ε̂_flop = ε_flop + τ_flop·π0, J/flop (§3.2).
  double effective_energy_per_flop_j() const { return eps_flop_j + baseline_energy_per_flop_j(); }
  /// Flop energy efficiency η_flop = ε_flop/(ε_flop + ε_0,flop), in [0, 1] (Eq. 13).
  double flop_efficiency() const { return eps_flop_j / effective_energy_per_flop_j(); }
  /// Flop power at peak π_flop = ε_flop/τ_flop, W (Tables 7, 9, 11).
  double flop_power_w() const { return eps_flop_j * peak_flop_per_s; }
  /// Memory power at peak bandwidth π_mem = ε_mem/τ_mem, W (Tables 7, 9, 11).
  double memory_power_w() const { return eps_mem_j_per_byte * bandwidth_byte_per_s; }
  /// Energy per memory operation (one word) ε_mop = ε_mem·word_bytes, J (Tables 6, 8, 10).
  double energy_per_word_j() const { return eps_mem_j_per_byte * word_bytes; }
  /// Effective energy balance B̂_ε(I) = η·B_ε + (1 − η)·max(0, B_τ − I), flop/B (Eq. 8).
  double effective_energy_balance_flop_per_byte(double intensity_flop_per_byte) const;
  /// The effective energy balance point: the intensity I with I = B̂_ε(I), flop/B (the left
  /// dotted line of seed 003 Figs. 3, 6, 8).
  double effective_energy_balance_point_flop_per_byte() const;
  /// Energy per flop at intensity I: ε̂_flop·(1 + B̂_ε(I)/I), J/flop (Eq. 9 divided by W).
  double energy_per_flop_j(double intensity_flop_per_byte) const;
  /// The archline: flop per joule at intensity I, 1/energy_per_flop_j(I), flop/J.
  double flop_per_joule(double intensity_flop_per_byte) const {
    return 1 / energy_per_flop_j(intensity_flop_per_byte);
  }
  /// The roofline: min(peak, I·bandwidth), flop/s.
  double roofline_flop_per_s(double intensity_flop_per_byte) const;
  /// The powerline: π_flop/η·[min(I, B_τ)/B_τ + B̂_ε(I)/max(I, B_τ)], W (Eq. 10).
  double power_w(double intensity_flop_per_byte) const;
  /// E = W·ε_flop + Q·ε_mem + T·π0, J (Eq. 5).
  double energy_j(double flop_count, double bytes, double time_s) const {
    return flop_count * eps_flop_j + bytes * eps_mem_j_per_byte + time_s * pi0_w;
  }
};

/// Bytes of one word of `precision` (fp32 4, fp64 8, tf32 4, fp16/bf16 2).
double bytes_per_word(device::Precision precision);

}  // namespace nnergy::archline
