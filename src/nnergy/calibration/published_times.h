#pragma once

// Published whole-network times, average powers and energies per iteration
// (data/calibration/measured_public.json, or measurements of the same format such as
// data/measured/h100/networks.json, imported as published::PublishedMeasurement) as measurements
// nnergy can predict: each record's GPU mapped to a catalog device (data/calibration/gpus.json)
// and its network to an ONNX architecture. A network that is a key of
// data/calibration/networks.json takes the file and dimensions given there; any other network
// that is a zoo name (data/zoo/<network>.onnx exists, e.g. "convnext_base", "bert_base") takes
// that zoo file with the record's batch and the zoo's default dimensions (seq = 128), as
// `nnergy predict <name>` does; a network that is neither is skipped with the reason.

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "nnergy/calibration/time_calibration.h"
#include "nnergy/core/setting_name.h"
#include "nnergy/network/time_evaluation.h"
#include "nnergy/published/published_measurement.h"

namespace nnergy::calibration {

/// The records that became measurements, and every other record with the reason it did not.
struct PublishedTimes {
  std::vector<network::NetworkTimeMeasurement> measurements;
  std::vector<std::pair<std::string, std::string>> skipped;  ///< record id, reason
  /// Measurements whose batch the record does not state: record id, the batch assumed and why
  /// (data/calibration/assumed_batches.json).
  std::vector<std::pair<std::string, std::string>> assumptions;
};

/// Turns the whole-network time records (time per iteration, forward or backward time per
/// iteration, latency per batch, throughput → batch / throughput) of the given grades into
/// measurements. Precision: "fp32" as fp32, "TF32" (also "fp32 storage; TF32 … math") as tf32,
/// pure fp16 and AMP as fp16. Modes: "inference"; "training (fwd+bwd, no optimizer)";
/// "training_forward"/"training_backward" (parts of a training iteration); "training" (with the
/// optimizer step). A record of a framework without cuDNN, a record without a batch, with another
/// quantity or mode, a GPU or network the mapping files lack, or a grade not asked for is skipped
/// with the reason (power and energy records too: published_figures takes those), and so is a
/// record that repeats a run its source also publishes under a preferred quantity
/// (data/calibration/protocols.json, one_figure_per_run: NVIDIA's inference latency next to the
/// throughput of the same run), naming the quantity scored instead. A record
/// without a batch takes the one data/calibration/assumed_batches.json
/// gives for its id (named in `assumptions`), else is skipped. A per-operator time
/// ("layer_forward_time") becomes a measurement of the nodes data/calibration/layer_ops.json
/// maps it to (NetworkTimeMeasurement::nodes), or is skipped with the reason that file gives.
/// Throws InvalidInput naming the mapping file when one is missing or malformed.
PublishedTimes published_times(const std::vector<published::PublishedMeasurement>& records,
                               const std::filesystem::path& data_dir,
                               const std::vector<std::string>& grades);

/// The copy-kernel bandwidths of `records` (quantity "achieved_fraction_of_peak_bandwidth" of
/// the network "memory copy kernel", a fraction in (0, 1]) whose GPU data/calibration/gpus.json
/// maps to a catalog device, as anchors of the memory efficiency (fit_times); every other such
/// record is skipped with the reason. Grades are not filtered: these microbenchmarks are grade C,
/// the grade meant for device parameters. Throws InvalidInput when gpus.json cannot be read.
struct PublishedBandwidths {
  std::vector<BandwidthAnchor> anchors;
  std::vector<std::pair<std::string, std::string>> skipped;  ///< record id, reason
};
PublishedBandwidths published_bandwidths(
    const std::vector<published::PublishedMeasurement>& records,
    const std::filesystem::path& data_dir);

/// Throws InvalidInput naming the setting `grades` (as `names` spells it) and the first grade
/// that is not one of published::published_grades() (A, B, C).
void check_grades(const std::vector<std::string>& grades, SettingNames names);

/// A published average power over whole iterations, with the run it was measured on
/// (run.measured_s is 0: the power record carries no time).
struct PowerMeasurement {
  network::NetworkTimeMeasurement run;
  double measured_w = 0;  ///< average board power, W
};

/// The average-power records that became measurements, and every other one with the reason.
struct PublishedPowers {
  std::vector<PowerMeasurement> measurements;
  std::vector<std::pair<std::string, std::string>> skipped;      ///< record id, reason
  std::vector<std::pair<std::string, std::string>> assumptions;  ///< as in PublishedTimes
};

/// Turns the "avg_power" records into measurements, with the same mapping and rules as
/// published_times; a record whose unit_si is not "W" is skipped with the reason. Records of
/// other quantities are ignored.
PublishedPowers published_powers(const std::vector<published::PublishedMeasurement>& records,
                                 const std::filesystem::path& data_dir,
                                 const std::vector<std::string>& grades);

/// A published energy per iteration (whole board, idle share included), with the run it was
/// measured on (run.measured_s is 0: the energy record carries no time).
struct EnergyMeasurement {
  network::NetworkTimeMeasurement run;
  double measured_j = 0;  ///< energy of one iteration, J
};

/// The energy-per-iteration records that became measurements, and every other one with the
/// reason.
struct PublishedEnergies {
  std::vector<EnergyMeasurement> measurements;
  std::vector<std::pair<std::string, std::string>> skipped;      ///< record id, reason
  std::vector<std::pair<std::string, std::string>> assumptions;  ///< as in PublishedTimes
};

/// Turns the "energy_per_iteration" records into measurements, with the same mapping and rules
/// as published_powers (unit_si must be "J"). Records of other quantities are ignored.
PublishedEnergies published_energies(const std::vector<published::PublishedMeasurement>& records,
                                     const std::filesystem::path& data_dir,
                                     const std::vector<std::string>& grades);

/// Every record of a file as what nnergy can predict of it: whole-network times (as
/// published_times), average powers (as published_powers) and energies per iteration (as
/// published_energies), each list in file order; a record of any other quantity is skipped
/// with the reason, as is one that cannot be mapped. The mapping files are read once.
struct PublishedFigures {
  std::vector<network::NetworkTimeMeasurement> times;
  std::vector<PowerMeasurement> powers;
  std::vector<EnergyMeasurement> energies;
  std::vector<std::pair<std::string, std::string>> skipped;      ///< record id, reason
  std::vector<std::pair<std::string, std::string>> assumptions;  ///< as in PublishedTimes
};
PublishedFigures published_figures(const std::vector<published::PublishedMeasurement>& records,
                                   const std::filesystem::path& data_dir,
                                   const std::vector<std::string>& grades);

}  // namespace nnergy::calibration
