#pragma once

// Predicted against measured whole-network times: nnergy's network-level predictions of any set
// of measurements (published ones, or a user's own); learn/time_accuracy.h scores them.

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "nnergy/device/device_catalog.h"
#include "nnergy/graph/onnx_importer.h"
#include "nnergy/predict/op_predictor.h"

namespace nnergy::network {

/// Which part of an iteration a measurement timed.
enum class TimedPart {
  kIteration,  ///< the whole iteration: inference, or forward + backward (+ optimizer step)
  kForward,    ///< the forward pass of a training iteration
  kBackward,   ///< the backward pass of a training iteration
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
  predict::Mode mode = predict::Mode::kInference;
  TimedPart part = TimedPart::kIteration;
  bool optimizer_step = false;  ///< training: whether the measured time includes the step
  device::Precision precision = device::Precision::kFp32;
  double measured_s = 0;  ///< measured time of the part, s
};

/// A measurement with nnergy's prediction of it.
struct EvaluatedTime {
  NetworkTimeMeasurement measurement;
  double predicted_s = 0;
  double ratio() const { return predicted_s / measurement.measured_s; }  ///< predicted/measured
};

/// Settings of the prediction (what is not in the measurement).
struct TimeEvaluationSettings {
  double host_launch_s = 0;  ///< see PredictionSettings::host_launch_s
};

/// Predicts every measurement with the analytical model of `catalog`'s device (each network
/// imported once per batch and bindings). A measurement that cannot be predicted (its device
/// lacks the precision's peak, its model fails to import) is returned in `failures` with the
/// reason, never dropped silently.
struct TimeEvaluation {
  std::vector<EvaluatedTime> evaluated;
  std::vector<std::pair<NetworkTimeMeasurement, std::string>> failures;
};
TimeEvaluation evaluate_times(const std::vector<NetworkTimeMeasurement>& measurements,
                              const device::DeviceCatalog& catalog,
                              const TimeEvaluationSettings& settings = {});

}  // namespace nnergy::network
