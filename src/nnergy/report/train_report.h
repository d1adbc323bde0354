#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "nnergy/learn/training_table.h"

namespace nnergy::report {

/// One target of a trained model file as `nnergy train` reports it.
struct TrainedTarget {
  std::size_t rows = 0;  ///< training rows with this target
  /// The in-sample metrics saved with the model ({"training_set": {mode: FitMetrics}}).
  nlohmann::json metrics = nlohmann::json::object();
};

/// What `nnergy train` shows: the dataset, the rows used, the fitted targets and the file.
struct TrainReport {
  std::string predictor;       ///< registry name of the regressor
  std::filesystem::path db;    ///< the dataset trained on
  std::string dataset_digest;  ///< FNV-1a 64 of its bytes
  learn::DeviceResolution device;
  std::size_t rows = 0;  ///< op measurements used
  std::size_t ops = 0;   ///< distinct ops among them
  std::size_t dropped_rows = 0;
  std::size_t error_rows = 0;
  std::size_t dropped_power = 0;
  std::size_t feature_columns = 0;
  TrainedTarget time;
  std::optional<TrainedTarget> power;  ///< absent: the dataset has no power measurements
  double train_s = 0;                  ///< wall time of the fits, s
  std::filesystem::path model_file;    ///< the .nnp written
  std::uintmax_t model_file_bytes = 0;
};

/// The summary `nnergy train` prints: dataset, device, rows, each target with its in-sample
/// R² and MAPE per mode, training time and the file written.
std::string render_text(const TrainReport& report);

}  // namespace nnergy::report
