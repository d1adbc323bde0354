#include "nnergy/fleet/energy_total.h"

namespace nnergy::fleet {

void EnergyTotal::add(const measure::PowerSample& sample) {
  if (sample.energy_j) {
    const double counter = *sample.energy_j;
    if (!total_j_) {
      total_j_ = counter;
    } else if (last_counter_j_ && counter > *last_counter_j_) {
      // A counter that went backwards adds nothing: counting resumes from its new value.
      *total_j_ += counter - *last_counter_j_;
    }
    last_counter_j_ = counter;
  } else if (sample.power_w) {
    if (!total_j_) {
      total_j_ = 0.0;
    } else if (last_power_w_ && sample.time_s > last_time_s_) {
      *total_j_ += 0.5 * (*last_power_w_ + *sample.power_w) * (sample.time_s - last_time_s_);
    }
    last_power_w_ = sample.power_w;
    last_time_s_ = sample.time_s;
  }
}

}  // namespace nnergy::fleet
