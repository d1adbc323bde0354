#include "nnergy/archline/archline_model.h"

#include <algorithm>
#include <string>

#include "nnergy/core/error.h"

namespace nnergy::archline {

double bytes_per_word(device::Precision precision) {
  switch (precision) {
    case device::Precision::kFp64:
      return 8;
    case device::Precision::kFp16:
    case device::Precision::kBf16:
      return 2;
    case device::Precision::kFp32:
    case device::Precision::kTf32:
      return 4;
    case device::Precision::kFp8:
    case device::Precision::kInt8:
      return 1;
    case device::Precision::kFp4:
      return 0.5;
  }
  throw InternalError("unknown Precision");
}

ArchlineModel ArchlineModel::from_device(const device::DeviceSpec& device,
                                         device::Precision precision) {
  const std::optional<double> peak = device.peak(precision);
  if (!peak) {
    throw InvalidInput("device '" + device.id + "' has no " +
                       std::string(device::to_string(precision)) +
                       " peak in the catalog; choose a precision it has (see `nnergy devices`)");
  }
  const device::ArchlineParameters a = device.archline_for(precision);
  ArchlineModel m;
  m.eps_flop_j = a.eps_flop_j;
  m.eps_mem_j_per_byte = a.eps_mem_j_per_byte;
  m.pi0_w = a.pi0_w;
  m.peak_flop_per_s = a.reference_peak_flop_per_s.value_or(*peak);
  m.bandwidth_byte_per_s =
      a.reference_bandwidth_byte_per_s.value_or(device.memory_bandwidth_byte_per_s);
  m.word_bytes = bytes_per_word(precision);
  return m;
}

double ArchlineModel::effective_energy_balance_flop_per_byte(double intensity_flop_per_byte) const {
  const double eta = flop_efficiency();
  return eta * energy_balance_flop_per_byte() +
         (1 - eta) * std::max(0.0, time_balance_flop_per_byte() - intensity_flop_per_byte);
}

double ArchlineModel::effective_energy_balance_point_flop_per_byte() const {
  // Eq. 8 with I = B̂_ε(I): above B_τ the max() term vanishes and I = η·B_ε; below it,
  // I = η·B_ε + (1 − η)·(B_τ − I), solved for I.
  const double eta = flop_efficiency();
  const double b_tau = time_balance_flop_per_byte();
  const double above = eta * energy_balance_flop_per_byte();
  if (above >= b_tau) return above;
  return (above + (1 - eta) * b_tau) / (2 - eta);
}

double ArchlineModel::energy_per_flop_j(double intensity_flop_per_byte) const {
  return effective_energy_per_flop_j() *
         (1 + effective_energy_balance_flop_per_byte(intensity_flop_per_byte) /
                  intensity_flop_per_byte);
}

double ArchlineModel::roofline_flop_per_s(double intensity_flop_per_byte) const {
  return std::min(peak_flop_per_s, intensity_flop_per_byte * bandwidth_byte_per_s);
}

double ArchlineModel::power_w(double intensity_flop_per_byte) const {
  const double b_tau = time_balance_flop_per_byte();
  return flop_power_w() / flop_efficiency() *
         (std::min(intensity_flop_per_byte, b_tau) / b_tau +
          effective_energy_balance_flop_per_byte(intensity_flop_per_byte) /
              std::max(intensity_flop_per_byte, b_tau));
}

}  // namespace nnergy::archline
