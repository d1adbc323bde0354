#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "nnergy/core/setting_name.h"
#include "nnergy/device/device_catalog.h"
#include "nnergy/kernel/kernel_parameters.h"
#include "nnergy/llm/model_catalog.h"
#include "nnergy/llm/weight_format.h"
#include "nnergy/report/serve_report.h"
#include "nnergy/serve/engine.h"
#include "nnergy/serve/serve_calibration.h"
#include "nnergy/serve/serving_run.h"

namespace nnergy::api {

/// The device `serve` uses when the request names none.
inline constexpr const char* kDefaultServeDevice = "h100-sxm";

/// Whose power the figures count.
enum class PowerScope {
  kGpu,   ///< the GPUs' own (NVML), as ML.ENERGY and Zeus measure
  kNode,  ///< the servers' at the wall: GPUs plus an estimated host share per GPU
};

/// "gpu" or "node"; anything else is InvalidInput naming `setting`.
PowerScope parse_power_scope(std::string_view name, std::string_view setting);

/// Everything `nnergy serve` needs. Values are typed; what depends on the model or the device
/// is checked by serve().
struct ServeRequest {
  /// A Hugging Face id of the catalog (`nnergy serve --list-models`), with the usual suffixes,
  /// or the path of a config.json.
  std::string model;
  std::optional<std::string> device;  ///< default kDefaultServeDevice
  std::optional<int> gpus;
  std::optional<int> tp;
  std::optional<int> pp;
  std::optional<int> ep;
  std::optional<llm::WeightFormat> precision;     ///< default: the checkpoint's
  std::optional<llm::WeightFormat> kv_precision;  ///< default: 16-bit
  std::optional<std::string> engine;              ///< default: the catalog's default (vLLM)
  serve::Workload workload = serve::Workload::kServing;
  double input_tokens = 0;
  double output_tokens = 0;
  /// Running sequences per replica (serving) or the batch (offline); default: the largest that
  /// fits.
  std::optional<int> max_batch;
  std::optional<int> max_batched_tokens;
  std::optional<double> clock_mhz;
  bool sweep_clocks = false;
  std::vector<int> sweep_batch;
  PowerScope power_scope = PowerScope::kGpu;
  bool layers = false;  ///< the operations of a representative decode step
  std::filesystem::path devices_file;
  std::string command_line;
  SettingNames names = SettingNames::kKeyword;
};

/// What serve() reads from the data directory, loaded once for several predictions (compare
/// --serve): the model catalog, the device catalog (with `devices_file` merged), the engines
/// and the LLM calibration.
struct ServeCatalogs {
  llm::ModelCatalog models;
  device::DeviceCatalog devices;
  serve::EngineCatalog engines;
  serve::ServeCalibration calibration;
  kernel::KernelParameters kernels;  ///< the kernel model's (data/kernel/calibrated.json)
  /// Loads all five from the data directory. Throws InvalidInput for a bad devices_file.
  static ServeCatalogs load(const std::filesystem::path& devices_file);
};

/// The architecture `request.model` names (a catalog entry or a config.json), for callers that
/// check the model once before many predictions. Throws InvalidInput as serve() does.
llm::Architecture serve_model(const ServeRequest& request, const ServeCatalogs& catalogs);

/// serve() with the catalogs already loaded; request.devices_file is not read again.
report::ServeReport serve(const ServeRequest& request, const ServeCatalogs& catalogs);

/// Predicts time, power and energy per token of serving `request.model`. Throws InvalidInput
/// naming the setting for: an unknown model (did you mean), a config.json that cannot be read,
/// an unknown device or engine, a precision the GPU can neither compute nor run weight-only,
/// parallelism that does not divide the model, a model or batch that does not fit, token counts
/// that are not positive or exceed the context. Thread-safe.
report::ServeReport serve(const ServeRequest& request);

/// The models of the embedded catalog.
std::vector<report::ModelListing> list_models();

}  // namespace nnergy::api
