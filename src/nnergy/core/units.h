#pragma once

/// Conversions from vendor and display units to SI. Everything inside nnergy is SI
/// (seconds, joules, watts, bytes, flop); each conversion lives here, once.
namespace nnergy::units {

inline constexpr double kPico = 1e-12;
inline constexpr double kMega = 1e6;
inline constexpr double kGiga = 1e9;

/// Picojoules to joules (archline parameters are published in pJ per flop and pJ per byte).
constexpr double picojoules_to_joules(double pj) { return pj * kPico; }
/// Joules to picojoules.
constexpr double joules_to_picojoules(double j) { return j / kPico; }
/// Megahertz to hertz.
constexpr double megahertz_to_hertz(double mhz) { return mhz * kMega; }

}  // namespace nnergy::units
