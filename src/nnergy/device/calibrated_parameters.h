#pragma once

// The analytical time model's parameters as `nnergy calibrate` fitted them on published
// measurements (data/calibration/calibrated.json), and how a catalog device gets them: those of
// its own architecture generation when the measurements covered it, else transferred from the
// nearest measured generation, applied to the device's own datasheet peaks.

#include <cstddef>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "nnergy/device/device_spec.h"

namespace nnergy::device {

/// Efficiencies fitted for one architecture generation (see device::Efficiency).
struct GenerationEfficiency {
  double compute = 0;                ///< η of the vector (CUDA-core) peak, (0, 1]
  std::optional<double> tensor;      ///< η of the matrix-unit peak; absent: not measured
  double memory = 0;                 ///< fraction of peak bandwidth, (0, 1]
  double release_year = 0;           ///< mean release year of its measured devices
  std::size_t records = 0;           ///< measurements it was fitted on
  std::vector<std::string> devices;  ///< catalog ids of the measured devices
  /// 1σ of ln(measured/predicted), leave-one-GPU-out, of its devices; 0 = unknown.
  double time_log_sigma = 0;
};

/// The power model's fitted operand share and what it was fitted on.
struct PowerFit {
  double operand_share = 0;          ///< κ of PowerActivity, ≥ 0
  std::size_t records = 0;           ///< average powers fitted on
  std::vector<std::string> devices;  ///< catalog ids of their GPUs
  /// 1σ of ln(measured/predicted) of average power, leave-one-network-out; 0 = unknown.
  double power_log_sigma = 0;
  /// PowerActivity::tensor_flop_power by precision name ("bf16", ...); only fitted ones.
  std::map<std::string, double> tensor_flop_power;
};

/// What separates the files of CalibratedParameters::corpus.
inline constexpr std::string_view kCorpusSeparator = " + ";

/// Everything `nnergy calibrate` fitted.
struct CalibratedParameters {
  /// The measurements' files, as calibrate names them ("data/..." inside the data directory),
  /// joined by kCorpusSeparator.
  std::string corpus;
  std::size_t records = 0;  ///< whole-network times fitted on
  std::map<std::string, GenerationEfficiency> generations;
  double kernel_overhead_s = 0;        ///< GPU time per kernel launch, s (all generations)
  double work_half_flop_per_sm = 0;    ///< w½ of device::Efficiency, flop per SM
  double reduction_half = 0;           ///< K½ of device::Efficiency, MACs per output
  double winograd_speedup = 1;         ///< device::Efficiency::winograd_speedup (all generations)
  double grouped_conv_efficiency = 1;  ///< device::Efficiency::grouped_conv_efficiency
  double backward_matrix_efficiency = 1;  ///< device::Efficiency::backward_matrix_efficiency
  double convolution_time_scale = 1;      ///< device::Efficiency::convolution_time_scale
  /// device::Efficiency::statistics_memory_efficiency
  double statistics_memory_efficiency = 1;
  /// Host time per kernel of eager PyTorch, s: `predict`'s default --host-launch-us.
  double host_launch_s = 0;
  std::string host_launch_source;  ///< the host machine(s) host_launch_s was fitted on
  /// s per kernel, per host machine (calibration::host_of: "DGX A100", "<source> on <GPU id>").
  std::map<std::string, double> host_launch_by_host;
  /// Host time per kernel of an eager PyTorch training iteration over that of inference
  /// (autograd's dispatch), fitted on the sources that ran both.
  double host_launch_training_factor = 1;
  /// Rate of the pageable host-to-device copy of a network's inputs, B/s, fitted on the
  /// measurements whose timings include it (network::NetworkTimeMeasurement::input_copied);
  /// absent when none did.
  std::optional<double> input_copy_bytes_per_s;
  /// 1σ of ln(measured/predicted) for a device whose generation was not measured: leave-one-
  /// GPU-out residuals of the GPUs that were alone in their generation; 0 = unknown.
  double transferred_time_log_sigma = 0;
  /// The power model's operand share κ (PowerActivity), fitted on published average powers;
  /// absent when the corpus had none. Applied to every NVIDIA device.
  std::optional<PowerFit> power;

  /// predict's default host time per kernel, s: host_launch_s, times
  /// host_launch_training_factor for a training iteration.
  double host_launch_for(bool training) const {
    return host_launch_s * (training ? host_launch_training_factor : 1.0);
  }
};

/// Reads a file written by calibrated_parameters_json. Throws InvalidInput naming the file and
/// the field when it is malformed.
CalibratedParameters read_calibrated_parameters(const std::filesystem::path& path);
/// The JSON text of `parameters` (schema_version 1).
std::string calibrated_parameters_json(const CalibratedParameters& parameters);

/// Sets the efficiencies and calibration info of an NVIDIA `device` from `parameters`: its
/// generation's when measured, else the generation nearest in release year (ties: the one with
/// more records); the tensor η, when the device has matrix units and its generation has none,
/// from the nearest generation that has one. Other vendors' devices are left as they are
/// (returns false).
bool apply_calibration(const CalibratedParameters& parameters, DeviceSpec& device);

}  // namespace nnergy::device
