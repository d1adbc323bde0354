#include "nnergy/core/carbon.h"

#include <fmt/format.h>

#include <cmath>

#include "nnergy/core/error.h"

namespace nnergy {

void check_grid_gco2e_per_kwh(const std::optional<double>& gco2e_per_kwh, SettingNames names) {
  if (!gco2e_per_kwh || (*gco2e_per_kwh >= 0 && std::isfinite(*gco2e_per_kwh))) return;
  throw InvalidInput(fmt::format(
      "{}: expected a carbon intensity in g CO2e per kWh, 0 or more",
      setting_with_value(names, "grid_gco2e_per_kwh", fmt::format("{:g}", *gco2e_per_kwh))));
}

}  // namespace nnergy
