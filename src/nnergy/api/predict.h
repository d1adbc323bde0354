#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>

#include "nnergy/core/setting_name.h"
#include "nnergy/device/precision.h"
#include "nnergy/graph/op_catalog.h"
#include "nnergy/graph/whitelist.h"
#include "nnergy/network/runtime.h"
#include "nnergy/predict/op_predictor.h"
#include "nnergy/regress/regressor.h"
#include "nnergy/report/prediction_report.h"

namespace nnergy::api {

/// The device `predict` uses when neither the request nor a model file names one.
inline constexpr const char* kDefaultPredictDevice = "a100-40gb";

/// Everything `nnergy predict` needs: which network, on which device, under which settings.
/// Values are typed (parsed by the front end); what depends on the device or the network is
/// checked by predict().
struct PredictRequest {
  /// A zoo name (see `nnergy zoo`) or the path of an .onnx file.
  std::string model;
  /// Catalog id or alias; default: the model file's device with a learned predictor, else
  /// kDefaultPredictDevice.
  std::optional<std::string> device;
  /// Empty: the analytical model (roofline time + archline power, calibrated). Else the path of
  /// a model file written by `nnergy train` (.nnp).
  std::filesystem::path predictor_file;
  /// A device catalog (JSON) whose devices replace or add to the built-in ones; empty: none.
  std::filesystem::path devices_file;
  graph::Mode mode = graph::Mode::kInference;
  std::optional<std::int64_t> batch;         ///< binds the batch dimension; > 0
  std::map<std::string, std::int64_t> dims;  ///< other symbolic dimensions by name
  /// Default: the precision the file stores its tensors in (fp16 for a `model.half()` export,
  /// bf16, fp64; fp32 otherwise); a request that differs is honoured with a note.
  std::optional<device::Precision> precision;
  std::optional<double> clock_mhz;       ///< core clock, MHz; default: boost
  std::optional<double> power_limit_w;   ///< board power limit, W (the model finds the clock)
  std::optional<double> host_launch_us;  ///< default: the host profile's, µs
  /// A calibrated host profile (network::choose_host); default: the calibration's default host.
  std::optional<std::string> host;
  network::Runtime runtime = network::Runtime::kEager;
  /// fp32 with TF32 disabled in cuDNN too; default: convolutions in TF32 where the GPU has TF32
  /// tensor cores (PyTorch's default), matrix products in fp32.
  bool strict_fp32 = false;
  bool sweep_clocks = false;             ///< predict over the device's clocks too
  std::optional<double> sweep_step_mhz;  ///< default: the device's step, ≤ ~100 points
  /// The optimizer of a training step; default: SGD with momentum. Given for inference, it is
  /// ignored with a warning in the result.
  std::optional<graph::Optimizer> optimizer;
  std::optional<graph::Whitelist> whitelist;  ///< default: the standard list
  /// Classification error (fraction) and α for the energy-precision ratio; both or neither.
  std::optional<double> error;
  std::optional<double> alpha;
  /// Predict even when the estimated peak device memory exceeds the device's.
  bool ignore_memory = false;
  /// The regressors a model file may name; null: the standard ones (regress/regressor.h).
  const regress::RegressorRegistry* regressors = nullptr;
  /// The invocation, for the result's context block.
  std::string command_line;
  /// How messages name the settings above (flags for the CLI, keywords for Python).
  SettingNames names = SettingNames::kKeyword;
};

/// Predicts per-layer and network time, power and energy: loads the catalog (with
/// devices_file) and the model file, imports the network, checks its estimated device memory,
/// and predicts at one clock (or under the power limit), plus the clock sweep and the
/// energy-precision ratio when asked. The result carries its context block. Throws
/// InvalidInput naming the setting for an inconsistent request (a precision the device has no
/// peak for, a clock or power limit out of range, a network that does not fit), and whatever
/// the importer and the model file loader throw. Thread-safe (no shared state).
report::PredictionReport predict(const PredictRequest& request);

}  // namespace nnergy::api
