#pragma once

namespace nnergy {

/// Joules in one kilowatt-hour.
inline constexpr double kJoulesPerKwh = 3.6e6;

/// The world's average carbon intensity of electricity generation in 2023, g CO2e per kWh, used
/// when a user names no grid (`nnergy monitor`, nnergy.EnergyLogger). Source: Ember, Yearly
/// Electricity Data (2024 release): 481 g CO2/kWh.
inline constexpr double kWorldGridGco2ePerKwh = 481;

/// How outputs name that default.
inline constexpr const char* kWorldGridSource = "the world's average in 2023, Ember";

}  // namespace nnergy
