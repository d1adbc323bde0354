#include "nnergy/device/device_spec.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "nnergy/core/error.h"

namespace nnergy::device {

std::optional<double> DeviceSpec::peak(Precision precision) const {
  auto it = peak_flop_per_s.find(precision);
  if (it == peak_flop_per_s.end()) return std::nullopt;
  return it->second;
}

double relative_spread(double log_sigma) { return std::exp(log_sigma) - 1; }

bool DeviceSpec::has_matrix_units(Precision precision) const {
  if (precision == Precision::kFp32 || precision == Precision::kFp64) return false;
  // fp8, fp4 and int8 exist only as matrix units.
  if (precision == Precision::kFp8 || precision == Precision::kFp4 || precision == Precision::kInt8)
    return peak(precision).has_value();
  const std::optional<double> p = peak(precision);
  const std::optional<double> p32 = peak(Precision::kFp32);
  constexpr double kMatrixUnitRatio = 2.5;  // packed fp16 (2×) is still the vector units
  return p && p32 && *p > kMatrixUnitRatio * *p32;
}

std::string DeviceSpec::generation() const {
  return architecture.substr(0, architecture.find(' '));
}

ArchlineParameters DeviceSpec::archline_for(Precision precision) const {
  if (auto it = archline.find(precision); it != archline.end()) return it->second;
  auto fp32 = archline.find(Precision::kFp32);
  if (fp32 == archline.end()) {
    throw InvalidInput("device '" + id + "': no archline parameters for fp32 in the catalog");
  }
  ArchlineParameters derived = fp32->second;
  const std::optional<double> p32 = peak(Precision::kFp32);
  const std::optional<double> p = peak(precision);
  const auto calibrated = power_activity.tensor_flop_power.find(precision);
  const double ratio =
      calibrated != power_activity.tensor_flop_power.end() ? calibrated->second : 1.0;
  if (p32 && p && *p > 0) {
    // The fp32 flop power at this precision's peak, times the calibrated ratio.
    derived.eps_flop_j = fp32->second.eps_flop_j * (*p32 / *p) * ratio;
  }
  derived.estimated = true;
  derived.reference_peak_flop_per_s.reset();  // the fp32 reference peak is not this precision's
  derived.source =
      calibrated != power_activity.tensor_flop_power.end()
          ? fmt::format(
                "derived from fp32 ({}): {:.2f}x its flop power at the {} peak (fitted "
                "on measured average powers)",
                fp32->second.source, ratio, to_string(precision))
          : fmt::format("derived from fp32 ({}): same flop power at the {} peak",
                        fp32->second.source, to_string(precision));
  return derived;
}

std::vector<double> DeviceSpec::supported_clocks_mhz() const {
  std::vector<double> clocks;
  const double step = clock.step_mhz > 0 ? clock.step_mhz : 15.0;
  for (double f = clock.min_mhz; f < clock.boost_mhz - 1e-9; f += step) clocks.push_back(f);
  clocks.push_back(clock.boost_mhz);
  return clocks;
}

void DeviceSpec::check_clock(double clock_mhz, const std::string& flag) const {
  if (!std::isfinite(clock_mhz) || clock_mhz < clock.min_mhz - 1e-9 ||
      clock_mhz > clock.boost_mhz + 1e-9) {
    throw InvalidInput(fmt::format("{} {:g}: outside the core clock range of {} ({:g}–{:g} MHz)",
                                   flag, clock_mhz, id, clock.min_mhz, clock.boost_mhz));
  }
}

double DeviceSpec::relative_voltage(double clock_mhz) const {
  const double knee = std::clamp(dvfs.knee_mhz, clock.min_mhz, clock.boost_mhz);
  if (clock_mhz <= knee || clock.boost_mhz <= knee) return dvfs.v_min_ratio;
  const double x = std::min(1.0, (clock_mhz - knee) / (clock.boost_mhz - knee));
  return dvfs.v_min_ratio + (1.0 - dvfs.v_min_ratio) * x;
}

bool DeviceSpec::is_estimated(const std::string& field) const {
  return std::find(estimated_fields.begin(), estimated_fields.end(), field) !=
         estimated_fields.end();
}

}  // namespace nnergy::device
