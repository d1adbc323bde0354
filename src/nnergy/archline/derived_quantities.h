#pragma once

#include <string>
#include <vector>

#include "nnergy/archline/archline_model.h"

namespace nnergy::archline {

/// One quantity derived from an archline model (balance points, efficiencies, powers), in the
/// unit its label names (pJ, W, TFLOP/s, %), as `archline show` and `archline fit` list them.
struct DerivedQuantity {
  std::string label;  ///< with its unit, e.g. "ε_flop energy per flop [pJ/flop]"
  std::string key;    ///< JSON key with its unit, e.g. "eps_flop_pj"
  double value = 0;   ///< in the unit of the label and key
  std::string text;   ///< value printed to its significant digits, unit-less
};

/// The archline model's derived quantities, in a fixed order: ε_flop, ε_mem, ε_mop, π0, peaks,
/// time and energy balances, the effective balance point, baseline and effective energy per flop,
/// flop efficiency, flop and memory power, and power and energy per flop at the time balance.
std::vector<DerivedQuantity> derived_quantities(const ArchlineModel& model);

}  // namespace nnergy::archline
