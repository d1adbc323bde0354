#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "nnergy/dataset/dataset_store.h"

// A measured dataset checked against itself: each whole-network measurement beside the sum of
// its measured operations (seed 000 §6.1), the same Σ count × op value that evaluation scores
// predicted networks with (sum_network, learn/evaluation.h).
namespace nnergy::learn {

/// One whole-network measurement against the sum of its measured operations.
struct NetworkValidation {
  std::string network;
  std::string mode;            ///< "inference" or "training"
  std::string dtype;           ///< e.g. "fp32"
  std::int64_t clock_mhz = 0;  ///< as stored: 0 = the device's default clock
  double measured_time_s = 0;  ///< the network's measured time per iteration, s
  double summed_time_s = 0;    ///< Σ count × op time over the ops with an ok measurement, s
  std::int64_t unique_ops = 0;
  std::int64_t ops_measured = 0;        ///< unique ops with an ok measurement
  std::int64_t nodes_not_measured = 0;  ///< occurrences of the other ops (not whitelisted, errors)
  std::optional<double> measured_energy_j;  ///< per iteration, J; absent without a power source
  std::optional<double> summed_energy_j;    ///< Σ count × op energy, J; only when every measured
                                            ///< op has an energy
};

/// Every whole-network measurement of `store` with status ok and a time, of a network the store
/// holds, beside the sum of the ok op measurements of the same device, mode, clock and dtype
/// (network measurement order). Ops without such a measurement (outside the whitelist, errors)
/// are not summed; their occurrences are counted in nodes_not_measured.
std::vector<NetworkValidation> validate_networks(const dataset::DatasetStore& store);

/// (value − reference) / reference; absent when the reference is not positive.
std::optional<double> relative_difference(double value, double reference);

}  // namespace nnergy::learn
