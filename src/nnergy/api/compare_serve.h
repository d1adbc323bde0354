#pragma once

// `nnergy compare MODEL --serve`: which GPU and how many for serving a language model, ranked
// by energy per output token, under an optional latency target, with cost and emissions.

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "nnergy/api/serve.h"
#include "nnergy/core/setting_name.h"
#include "nnergy/report/serve_comparison_report.h"

namespace nnergy::api {

struct CompareServeRequest {
  std::string model;                 ///< as ServeRequest::model
  std::vector<std::string> devices;  ///< default: every GPU of the catalog that runs the format
  std::vector<int> gpus;             ///< GPUs per deployment (tensor parallel); default 1,2,4,8
  std::optional<llm::WeightFormat> precision;
  std::optional<llm::WeightFormat> kv_precision;
  std::optional<std::string> engine;
  serve::Workload workload = serve::Workload::kServing;
  double input_tokens = 0;
  double output_tokens = 0;
  /// Latency targets: the largest batch that meets both is taken (default: no target, the
  /// largest batch that fits).
  std::optional<double> max_itl_s;
  std::optional<double> max_ttft_s;
  /// Price of one GPU-hour, US$, by device id (as the catalog names it) and for any other
  /// device ("" key); a device without a price has no cost figure.
  std::map<std::string, double> price_per_gpu_hour;
  std::optional<double> grid_gco2e_per_kwh;  ///< the grid's carbon intensity
  PowerScope power_scope = PowerScope::kGpu;
  std::filesystem::path devices_file;
  std::string command_line;
  SettingNames names = SettingNames::kKeyword;
};

/// Predicts `request.model` on each device at each GPU count and ranks them. A deployment the
/// model does not fit, whose format the GPU cannot run or whose parallelism does not divide
/// the model is listed with the reason, not an error. Throws InvalidInput for an unknown model
/// or device, bad token counts or targets, or when nothing at all runs.
report::ServeComparison compare_serve(const CompareServeRequest& request);

}  // namespace nnergy::api
