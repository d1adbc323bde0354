#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "nnergy/core/setting_name.h"
#include "nnergy/dataset/dataset_store.h"
#include "nnergy/device/device_catalog.h"
#include "nnergy/device/device_spec.h"
#include "nnergy/features/feature_encoder.h"
#include "nnergy/features/feature_matrix.h"

/// Learned predictors end to end: training tables from a measured dataset, model files (.nnp),
/// the learned OpPredictor, and evaluation (k-fold CV, test split, held-out networks).
namespace nnergy::learn {

/// What a learned model predicts (seed 000 §5.1: one model for time, one for power; energy is
/// their product).
enum class Target { kTime, kPower };

/// "time_s" or "power_w": the key used in model files, CSV columns and messages.
std::string to_string(Target target);

/// One op measurement kept for training: the key, the op's family and the measured targets.
struct TrainingRow {
  std::string signature;          ///< graph::op_signature of the op
  std::string op_type;            ///< ONNX op type, the row's family (e.g. "Conv")
  std::string mode;               ///< "inference" or "training"
  std::int64_t clock_mhz = 0;     ///< as stored: 0 = the device's default clock
  std::string dtype;              ///< measured precision, e.g. "fp32"
  double time_s = 0;              ///< measured time per iteration, s (finite, > 0)
  std::optional<double> power_w;  ///< measured average power, W; absent when not measured
};

/// How the dataset device was matched to a catalog device.
struct DeviceResolution {
  std::string dataset_name;  ///< DeviceRecord::name, e.g. "AMD EPYC"
  std::string dataset_kind;  ///< "cpu" or "cuda"
  std::string catalog_id;    ///< the catalog device used for the features, e.g. "cpu-core"
  std::string how;           ///< one line: "--device", "catalog name", "cpu fallback", ...
};

/// The id of the catalog entry that stands for one CPU core (data/devices.json).
inline constexpr const char* kCpuCoreDeviceId = "cpu-core";

/// A dataset as regressors see it: one feature row and one TrainingRow per kept op measurement,
/// the feature schema, the device, and the networks (for network-level evaluation).
/// Plain data; safe to read from several threads.
struct TrainingTable {
  std::string dataset_path;
  std::string dataset_digest;  ///< FNV-1a 64 of the file's bytes, 16 hex digits (not SHA-256)
  DeviceResolution device_resolution;
  device::DeviceSpec device;  ///< the catalog device every row is encoded with
  features::FeatureEncoder encoder;
  features::FeatureMatrix features;  ///< rows().size() rows, encoder.names() columns
  std::vector<TrainingRow> rows;

  std::size_t error_rows = 0;     ///< measurements with status error (skipped, not counted below)
  std::size_t dropped_rows = 0;   ///< ok measurements without a finite positive time
  std::size_t dropped_power = 0;  ///< kept rows whose stored power is not finite positive
                                  ///< (kept for time, without power)

  std::vector<dataset::NetworkRecord> networks;
  /// Whole-network measurements with status ok and a time, of the table's device.
  std::vector<dataset::NetworkMeasurementRecord> network_measurements;

  /// Indices of the rows that have `target` (every row for time).
  std::vector<std::size_t> rows_with(Target target) const;
  /// The target values of `indices`, in that order (time_s or power_w).
  std::vector<double> values(Target target, const std::vector<std::size_t>& indices) const;
  /// Distinct signatures of the rows, sorted.
  std::vector<std::string> signatures() const;
};

/// Builds the table of the dataset at `db_path` (opened read-only). Every op measurement with
/// status ok becomes a row: its op (by signature) encoded in the FeatureContext (device,
/// clock_mhz from the key with 0 = boost, dtype, training = mode "training"). Rows whose time is
/// missing, NaN, infinite or not positive are dropped and counted; a power that is present but
/// not finite positive is dropped (and counted) for that row only.
///
/// The device: `device_id` (`--device`) when given; otherwise the catalog device whose id, alias
/// or name equals the dataset device's name (case-insensitive); otherwise, for a device of kind
/// "cpu", the catalog's "cpu-core". The feature schema is FeatureEncoder::fit over the measured
/// ops. Throws InvalidInput naming the file for a missing or malformed dataset, a dataset with
/// no usable measurement, several devices, or a device that cannot be matched (telling the user
/// to pass --device).
/// `names`: how messages name the db and device settings (flags for the CLI).
TrainingTable build_training_table(const std::string& db_path, const device::DeviceCatalog& catalog,
                                   const std::optional<std::string>& device_id,
                                   SettingNames names = SettingNames::kFlag);

/// FNV-1a 64 of the bytes of the file at `path`, as 16 lowercase hex digits. Throws InvalidInput
/// naming the file when it cannot be read.
std::string fnv1a_64_file_digest(const std::string& path);

}  // namespace nnergy::learn
