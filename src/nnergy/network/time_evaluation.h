#pragma once

// Predicted against measured whole-network times: nnergy's network-level predictions of any set
// of measurements (published ones, or a user's own); learn/time_accuracy.h scores them.

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "nnergy/analytical/pass_model.h"
#include "nnergy/core/progress.h"
#include "nnergy/device/device_catalog.h"
#include "nnergy/graph/onnx_importer.h"
#include "nnergy/network/network_prediction.h"

namespace nnergy::network {

/// Which part of an iteration a measurement timed.
enum class TimedPart {
  kIteration,  ///< the whole iteration: inference, or forward + backward (+ optimizer step)
  kForward,    ///< the forward pass of a training iteration
  kBackward,   ///< the backward pass of a training iteration
};

/// "iteration", "forward", "backward".
std::string_view to_string(TimedPart part);

/// The passes in which the measured run's kernel library computes dense 3×3 stride-1
/// convolutions with Winograd's algorithm (fewer multiplications; graph::MatrixKind::kConv3x3).
/// cuDNN added it in 5.0 for the forward pass and in 5.1 for the gradient passes.
enum class WinogradPasses {
  kAll,      ///< every pass (cuDNN 5.1 and later: every framework nnergy predicts today)
  kForward,  ///< the forward pass only (cuDNN 5.0)
  kNone,     ///< none (cuDNN 4 and earlier): 3×3 convolutions run as plain GEMMs
};

/// One measured whole-network time, with what it takes to predict it.
struct NetworkTimeMeasurement {
  std::string id;               ///< the measurement's identifier (e.g. the published record's id)
  std::string source;           ///< where it was published or measured
  std::string grade;            ///< how fair the comparison is ("A", "B", "C"), if known
  std::string network;          ///< the network's name as the measurement gives it
  std::string device_id;        ///< catalog id of the GPU
  std::filesystem::path model;  ///< ONNX file of the architecture
  graph::DimBindings bindings;  ///< batch and other dimensions
  graph::Mode mode = graph::Mode::kInference;
  TimedPart part = TimedPart::kIteration;
  bool optimizer_step = false;  ///< training: whether the measured time includes the step
  /// Whether the measured time includes copying the data inputs from pageable host memory to
  /// the GPU (e.g. `model(x.to('cuda'))` inside the timed loop).
  bool input_copied = false;
  /// The machine that ran it, where the corpus names one that several of its GPUs or sources
  /// share (e.g. "DGX A100"): its CPU and framework set the host launch time. Empty: a machine of
  /// its own (calibration::host_of names it).
  std::string host;
  WinogradPasses winograd = WinogradPasses::kAll;  ///< see WinogradPasses
  /// Whether eager PyTorch ran it, the framework whose host `predict` models: its training
  /// iterations dispatch kernels through autograd, which costs host time beyond inference's.
  bool eager_pytorch = false;
  device::Precision precision = device::Precision::kFp32;
  double measured_s = 0;  ///< measured time of the part, s
  /// Only these nodes (ONNX node names) were timed, each on its own (GPU time, no host launch
  /// path: e.g. CUDA events around each op); empty: the whole network.
  std::vector<std::string> nodes;
};

/// A measurement with nnergy's prediction of it.
struct EvaluatedTime {
  NetworkTimeMeasurement measurement;
  double predicted_s = 0;
  double ratio() const { return predicted_s / measurement.measured_s; }  ///< predicted/measured
};

/// Settings of the prediction (what is not in the measurement).
struct TimeEvaluationSettings {
  double host_launch_s = 0;           ///< inference, see PredictionSettings::host_launch_s
  double training_host_launch_s = 0;  ///< a training iteration's, s per kernel
  /// Rate of the pageable copy of the inputs of a measurement that includes it
  /// (NetworkTimeMeasurement::input_copied), B/s; 0: not predicted.
  double input_copy_bytes_per_s = 0;

  /// host_launch_s or training_host_launch_s.
  double host_launch_for(graph::Mode mode) const {
    return mode == graph::Mode::kTraining ? training_host_launch_s : host_launch_s;
  }
  /// The same host time per kernel in both modes (a user's --host-launch-us).
  static TimeEvaluationSettings same_host(double host_launch_s) {
    return {host_launch_s, host_launch_s, 0};
  }
};

/// Rate of a pageable host-to-device copy assumed when none was fitted, B/s: PCIe 3.0 x16 moves
/// about 12 GB/s from pinned memory, and the driver stages a pageable copy through a pinned
/// buffer at about half that.
inline constexpr double kNominalInputCopyBytesPerS = 6e9;

/// The settings `predict` and `evaluate` use: the host time per kernel in inference is
/// `host_launch_us` (µs) when given, else `calibration`'s (none: 0); a training iteration's is
/// that times the calibration's training factor (autograd's dispatch; none: 1). The input copy
/// rate is the calibration's, else the nominal one.
TimeEvaluationSettings host_settings(std::optional<double> host_launch_us,
                                     const device::CalibratedParameters* calibration);

/// The host machine and framework whose launch time a prediction takes.
struct HostChoice {
  std::string name;     ///< as the calibration names it ("DGX A100", ...)
  double launch_s = 0;  ///< inference, s per kernel
  std::string source;   ///< how it was obtained, for the output's notes
};

/// The host profile `host` names among `calibration`'s fitted hosts
/// (CalibratedParameters::host_launch_by_host; matched ignoring case, spaces and punctuation),
/// or the calibration's default host when `host` is empty. Throws InvalidInput naming
/// `setting` with the known hosts for an unknown name, or when nothing was calibrated.
HostChoice choose_host(const std::optional<std::string>& host,
                       const device::CalibratedParameters* calibration, std::string_view setting);

/// A measured network reduced to what its predicted time depends on: the passes of each unique
/// operation and the order the kernels are issued in. Built once, it predicts the measured part
/// on any device parameters quickly (calibration predicts each measurement many times); the
/// result equals predict_network's for the same device and settings.
class TimedNetwork {
 public:
  TimedNetwork(const CostedNetwork& network, const NetworkTimeMeasurement& measurement);

  /// Predicted time of the measured part (the forward, the backward or the whole iteration, with
  /// the optimizer step when the measurement includes it) on `device` at its boost
  /// clock, s: the critical path of the host issuing the part's kernels `host_launch_s` apart
  /// and the GPU running them; for a measurement of single nodes, their GPU times summed.
  /// The constructor throws InvalidInput naming a measured node the network lacks.
  /// When the measurement includes the copy of its inputs (input_copied) and
  /// `input_copy_bytes_per_s` is positive, the copy of input_bytes() at that rate comes first.
  double predict_s(const device::DeviceSpec& device, double host_launch_s,
                   double input_copy_bytes_per_s = 0) const;

  /// Bytes of the network's data inputs as the measurement stores them.
  double input_bytes() const { return input_bytes_; }

 private:
  struct Pass {
    graph::PassCost cost;
    graph::OpClass op_class = graph::OpClass::kUnknown;
    analytical::PassTraits traits;
  };
  // Unique passes, and per issued run the pass it runs (forward in network order, backward in
  // reverse order, then the optimizer step when measured).
  std::vector<Pass> passes_;
  std::vector<std::size_t> forward_runs_;
  std::vector<std::size_t> backward_runs_;
  std::optional<std::size_t> optimizer_run_;
  TimedPart part_ = TimedPart::kIteration;
  bool nodes_only_ = false;  // single nodes timed without the host
  device::Precision precision_ = device::Precision::kFp32;
  bool input_copied_ = false;
  double input_bytes_ = 0;
};

/// Imported and costed networks, each once per model, bindings and storage type (that of the
/// measurement's precision), shared by the measurements of the same run.
class NetworkCache {
 public:
  /// The network `m` measured, imported and costed on first use; throws what the importer
  /// throws (InvalidInput for a file that cannot be imported). The reference stays valid as
  /// long as the cache.
  const CostedNetwork& get(const NetworkTimeMeasurement& m);

 private:
  struct Entry {
    graph::Network network;
    std::unique_ptr<CostedNetwork> costed;  // refers to `network`, so the entry never moves
  };
  std::map<std::string, std::unique_ptr<Entry>> entries_;
};

/// The catalog device `m` was measured on. Throws InvalidInput for a device the catalog lacks
/// and for one without a peak for `m`'s precision.
const device::DeviceSpec& measured_device(const NetworkTimeMeasurement& m,
                                          const device::DeviceCatalog& catalog);

/// Measurements ready to predict: each imported and reduced once (networks shared between
/// measurements of the same model, bindings and precision), in the order given. A measurement
/// that cannot be prepared (unknown device, no peak for its precision, a model that fails to
/// import, a non-positive time) is in `failures` with the reason.
struct PreparedTimes {
  std::vector<NetworkTimeMeasurement> measurements;
  std::vector<TimedNetwork> networks;  ///< one per measurement
  std::vector<std::pair<NetworkTimeMeasurement, std::string>> failures;
};
/// `progress`, when given, is told the measurements prepared of all. `cache`, when given, holds
/// the imported networks (so that a caller predicting the same runs' powers imports them once);
/// else the call uses a cache of its own.
PreparedTimes prepare_times(const std::vector<NetworkTimeMeasurement>& measurements,
                            const device::DeviceCatalog& catalog,
                            const ProgressCallback& progress = {}, NetworkCache* cache = nullptr);

/// Predicts every measurement with the analytical model of `catalog`'s device (each network
/// imported once per batch and bindings). A measurement that cannot be predicted (its device
/// lacks the precision's peak, its model fails to import) is returned in `failures` with the
/// reason, never dropped silently. `progress`, when given, is told the measurements prepared
/// (imported and reduced, the slow part) of all; `cache` as in prepare_times.
struct TimeEvaluation {
  std::vector<EvaluatedTime> evaluated;
  std::vector<std::pair<NetworkTimeMeasurement, std::string>> failures;
};
TimeEvaluation evaluate_times(const std::vector<NetworkTimeMeasurement>& measurements,
                              const device::DeviceCatalog& catalog,
                              const TimeEvaluationSettings& settings = {},
                              const ProgressCallback& progress = {}, NetworkCache* cache = nullptr);

}  // namespace nnergy::network
