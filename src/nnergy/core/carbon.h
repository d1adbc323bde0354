#pragma once

#include <optional>

#include "nnergy/core/setting_name.h"

namespace nnergy {

/// Joules in one kilowatt-hour.
inline constexpr double kJoulesPerKwh = 3.6e6;

/// The world's average carbon intensity of electricity generation in 2023, g CO2e per kWh, used
/// when a user names no grid (`nnergy monitor`, nnergy.EnergyLogger). Source: Ember, Yearly
/// Electricity Data (2024 release): 481 g CO2/kWh.
inline constexpr double kWorldGridGco2ePerKwh = 481;

/// How outputs name that default.
inline constexpr const char* kWorldGridSource = "the world's average in 2023, Ember";

/// The CO2e of `joules` of electricity at `gco2e_per_kwh`, g.
inline constexpr double co2e_g(double joules, double gco2e_per_kwh) {
  return joules / kJoulesPerKwh * gco2e_per_kwh;
}

/// Checks a carbon intensity given as the setting `grid_gco2e_per_kwh` (absent: nothing to
/// check): finite and 0 or more, g CO2e per kWh. Throws InvalidInput naming the setting as
/// `names` spells it.
void check_grid_gco2e_per_kwh(const std::optional<double>& gco2e_per_kwh, SettingNames names);

}  // namespace nnergy
