#pragma once

#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "nnergy/measure/power_source.h"

namespace nnergy::measure {

/// A synthetic waveform, parsed from the argument of `--source synthetic:ARGUMENT`.
///
/// Grammar (comma-separated `key=value` items; each key at most once; exactly one of `constant`
/// and `steps`):
///
///     constant=W           constant power, W
///     steps=W/S,W/S,...    W watts for S seconds, then the next step; the list repeats forever.
///                          Items after `steps=` without an `=` are further steps, so
///                          "steps=100/1,300/0.5,noise=5" is two steps and a noise level.
///     noise=SIGMA_W        Gaussian noise of this standard deviation added to power_w (W, >= 0;
///                          default 0); the energy counter stays noiseless
///     seed=N               seed of the noise (unsigned integer; default 1)
///     clock=MHZ            reported SM clock, MHz (default: absent)
///     throttle=BITS        reported clock-event reason bits, decimal or 0x-hex (default 0)
///     name=NAME            source id "synthetic:NAME" instead of "synthetic"
///
/// Examples: "constant=250"; "steps=100/1,300/0.5,noise=5,seed=1,clock=1410".
struct SyntheticSpec {
  struct Step {
    double power_w = 0;
    double duration_s = 0;
  };
  std::vector<Step> steps;  ///< one step for `constant`
  bool constant = false;    ///< from `constant=W`
  double noise_sigma_w = 0;
  std::uint64_t seed = 1;
  std::optional<double> sm_clock_mhz;
  std::uint64_t throttle_reasons = 0;
  std::string name;  ///< empty: id "synthetic"
};

/// Parses the grammar above. Throws InvalidInput naming the offending key, what it accepts and
/// what was found.
SyntheticSpec parse_synthetic_spec(const std::string& argument);

/// A PowerSource that plays a SyntheticSpec on the caller's clock: read(t) reports the waveform's
/// power at t (plus noise) and, as energy_j, the exact integral of the noiseless waveform from 0
/// to t, so "constant=250" read at t = 2 s gives 500 J. Kind "synthetic". Not thread-safe (the
/// noise generator is per instance); instances share no state.
class SyntheticSource final : public PowerSource {
 public:
  explicit SyntheticSource(SyntheticSpec spec);

  const SourceInfo& info() const override { return info_; }
  /// Never throws. The k-th read of an instance gets the k-th noise value of its seed.
  PowerSample read(double time_s) override;

  /// Noiseless power at `time_s`, W.
  double power_at(double time_s) const;
  /// Integral of the noiseless power from 0 to `time_s`, J (negative for negative times).
  double energy_at(double time_s) const;

 private:
  double standard_normal();

  SyntheticSpec spec_;
  SourceInfo info_;
  double period_s_ = 0;
  double energy_per_period_j_ = 0;
  std::mt19937_64 generator_;
  std::optional<double> spare_normal_;
};

}  // namespace nnergy::measure
