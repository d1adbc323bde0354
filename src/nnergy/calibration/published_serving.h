#pragma once

// Published LLM-serving measurements (data/calibration/llm_measured_public.json) as nnergy serve
// runs, through data/calibration/llm_runs.json: which engine release and workload each source
// ran, the catalog model and GPU each record's names denote, and the records left out.

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "nnergy/device/device_catalog.h"
#include "nnergy/llm/model_catalog.h"
#include "nnergy/llm/weight_format.h"
#include "nnergy/serve/serving_run.h"

namespace nnergy::calibration {

/// The measured quantities of a serving run (all GPUs of the deployment).
struct ServingFigures {
  std::optional<double> tokens_per_s;
  std::optional<double> time_per_output_token_s;
  std::optional<double> energy_per_output_token_j;
  std::optional<double> avg_power_w;  ///< J/token × tokens/s where both are measured
};

/// The quantities scored, in the order of ServingFigures.
enum class ServingQuantity { kTokensPerS, kTimePerOutputToken, kEnergyPerOutputToken, kAvgPower };
inline constexpr int kServingQuantities = 4;
/// "tokens_per_s", "time_per_output_token_s", "energy_per_output_token_j", "avg_power_w".
std::string_view to_string(ServingQuantity q);
/// The figure of `q` in `f`.
std::optional<double> figure(const ServingFigures& f, ServingQuantity q);

/// One record as a run of nnergy serve.
struct PublishedServingRun {
  std::string id;          ///< the record's id, e.g. "LLM-0566"
  std::string source;      ///< llm_runs.json's key, e.g. "ml.energy-v2"
  std::string model_name;  ///< as the record names it
  std::string model_id;    ///< the catalog's
  std::string gpu_name;    ///< as the record names it
  std::string device_id;   ///< the catalog's
  std::string engine_id;
  serve::Workload workload = serve::Workload::kServing;
  int tp = 1;
  int pp = 1;
  int gpus = 1;
  std::optional<double> batch;  ///< running sequences or the batch; unset: the largest that fits
  double input_tokens = 0;
  double output_tokens = 0;
  std::optional<llm::WeightFormat> precision;  ///< unset: the checkpoint's
  ServingFigures measured;
  /// The source's TPOT times decode iterations alone (ServeResult::decode_step_s), not the
  /// inter-token latency with prefill stalls.
  bool tpot_is_decode_step = false;
  std::vector<ServingQuantity> scored;  ///< the quantities its source's records are scored on
};

/// The records that could not be mapped, with why.
struct SkippedServingRecord {
  std::string id;
  std::string reason;
};

struct PublishedServing {
  std::vector<PublishedServingRun> runs;
  std::vector<SkippedServingRecord> skipped;
  std::string records_source;  ///< the records file
};

/// Reads `records` through `mapping` (llm_runs.json), resolving models in `models` and GPUs in
/// `devices` (names the mapping gives first, then the catalog's own matching). Throws
/// InvalidInput naming the file for a malformed records or mapping file.
PublishedServing read_published_serving(const std::filesystem::path& records,
                                        const std::filesystem::path& mapping,
                                        const llm::ModelCatalog& models,
                                        const device::DeviceCatalog& devices);

}  // namespace nnergy::calibration
