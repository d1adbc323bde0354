#include "nnergy/archline/derived_quantities.h"

#include <fmt/format.h>

#include "nnergy/core/units.h"

namespace nnergy::archline {

namespace {

DerivedQuantity quantity(std::string label, std::string key, double value, int digits) {
  return {std::move(label), std::move(key), value, fmt::format("{:.{}g}", value, digits)};
}

DerivedQuantity picojoules(std::string label, std::string key, double joules) {
  return quantity(std::move(label), std::move(key), units::joules_to_picojoules(joules), 4);
}

}  // namespace

std::vector<DerivedQuantity> derived_quantities(const ArchlineModel& m) {
  const double b_tau = m.time_balance_flop_per_byte();
  std::vector<DerivedQuantity> rows = {
      picojoules("ε_flop energy per flop [pJ/flop]", "eps_flop_pj", m.eps_flop_j),
      picojoules("ε_mem energy per byte [pJ/B]", "eps_mem_pj_per_byte", m.eps_mem_j_per_byte),
      picojoules("ε_mop energy per word [pJ/word]", "eps_mop_pj_per_word", m.energy_per_word_j()),
      quantity("π0 baseline power [W]", "pi0_w", m.pi0_w, 4),
      quantity("peak performance [TFLOP/s]", "peak_flop_per_s", m.peak_flop_per_s, 4),
      quantity("peak bandwidth [TB/s]", "bandwidth_byte_per_s", m.bandwidth_byte_per_s, 4),
      quantity("B_τ time balance [flop/B]", "time_balance_flop_per_byte", b_tau, 3),
      quantity("B_ε energy balance ε_mem/ε_flop [flop/B]", "energy_balance_flop_per_byte",
               m.energy_balance_flop_per_byte(), 3),
      quantity("B̂_ε effective balance point, I = B̂_ε(I) [flop/B]",
               "effective_energy_balance_point_flop_per_byte",
               m.effective_energy_balance_point_flop_per_byte(), 3),
      picojoules("ε_0,flop = τ_flop·π0 [pJ/flop]", "baseline_energy_per_flop_pj",
                 m.baseline_energy_per_flop_j()),
      picojoules("ε̂_flop effective energy per flop [pJ/flop]", "effective_energy_per_flop_pj",
                 m.effective_energy_per_flop_j()),
      {"η_flop flop energy efficiency [%]", "flop_efficiency_percent", m.flop_efficiency() * 100,
       fmt::format("{:.2f}", m.flop_efficiency() * 100)},
      quantity("π_flop flop power at peak [W]", "pi_flop_w", m.flop_power_w(), 4),
      quantity("π_mem memory power at peak bandwidth [W]", "pi_mem_w", m.memory_power_w(), 4),
      quantity("powerline at B_τ [W]", "power_at_time_balance_w", m.power_w(b_tau), 4),
      picojoules("energy per flop at B_τ [pJ/flop]", "energy_per_flop_at_time_balance_pj",
                 m.energy_per_flop_j(b_tau)),
  };
  // Peaks are listed in TFLOP/s and TB/s but keyed in SI (flop/s, B/s), as the JSON always was.
  rows[4].text = fmt::format("{:.4g}", m.peak_flop_per_s / 1e12);
  rows[5].text = fmt::format("{:.4g}", m.bandwidth_byte_per_s / 1e12);
  return rows;
}

}  // namespace nnergy::archline
