#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "nnergy/core/setting_name.h"
#include "nnergy/device/precision.h"
#include "nnergy/graph/op_catalog.h"
#include "nnergy/predict/op_predictor.h"
#include "nnergy/report/comparison_report.h"

namespace nnergy::api {

/// What `nnergy compare` needs: one network, the devices to set side by side, and the settings
/// every device is predicted under.
struct CompareRequest {
  std::string model;  ///< a zoo name or the path of an .onnx file
  /// Catalog ids or aliases; empty: every GPU of the catalog (vendor nvidia or amd).
  std::vector<std::string> devices;
  /// Samples per iteration, one comparison each; empty: the file's fixed batch, else 1.
  std::vector<std::int64_t> batches;
  std::map<std::string, std::int64_t> dims;  ///< other symbolic dimensions by name
  /// A device catalog (JSON) whose devices replace or add to the built-in ones; empty: none.
  std::filesystem::path devices_file;
  graph::Mode mode = graph::Mode::kInference;
  /// Default: the type the file stores its tensors in (as for PredictRequest::precision).
  std::optional<device::Precision> precision;
  std::optional<double> host_launch_us;       ///< default: the calibrated eager value, µs
  std::optional<graph::Optimizer> optimizer;  ///< training; default SGD with momentum
  /// The invocation, for the result's context block.
  std::string command_line;
  /// How messages name the settings above (flags for the CLI, keywords for Python).
  SettingNames names = SettingNames::kKeyword;
};

/// Predicts the network on each device (the analytical model, as `predict` does) at its boost
/// clock and at its own energy-optimal clock (from a clock sweep), for each batch; marks the rows
/// that exceed the device's memory (still predicted, not ranked), the host-bound ones and the
/// Pareto front, and ranks the rest. A device explicitly asked for that lacks the precision is
/// an error; with the default device list it is left out and named in the notes. Throws
/// InvalidInput naming the setting for an unknown device, a bad batch or a model that cannot be
/// loaded. Thread-safe; the devices are predicted in parallel.
report::ComparisonReport compare(const CompareRequest& request);

}  // namespace nnergy::api
