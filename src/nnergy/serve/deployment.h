#pragma once

// A deployment of a language model: which GPU, how many, how the model is split over them
// (tensor, pipeline and expert parallelism, replicas), in which formats, under which engine, and
// what fits in their memory.

#include <optional>
#include <string>
#include <vector>

#include "nnergy/core/setting_name.h"
#include "nnergy/device/device_catalog.h"
#include "nnergy/device/operating_point.h"
#include "nnergy/kernel/kernel_parameters.h"
#include "nnergy/llm/architecture.h"
#include "nnergy/llm/step_work.h"
#include "nnergy/llm/weight_format.h"
#include "nnergy/serve/engine.h"

namespace nnergy::serve {

/// Scales of the kernel model's GEMM power above idle that the serving calibration fits per GPU
/// generation (GenerationFit): the tensor units' share, and the rest (clocks up, DRAM).
struct KernelPowerScales {
  double tensor = 1;
  double other = 1;
};

/// What a deployment is settled from; unset parallelism is chosen (see settle()).
struct DeploymentRequest {
  const llm::Architecture* model = nullptr;
  const device::DeviceSpec* device = nullptr;
  const device::DeviceCatalog* catalog = nullptr;  ///< for "GPUs that can" in refusals
  const EngineProfile* engine = nullptr;
  /// The kernel model's fitted parameters (data/kernel/calibrated.json): matrix products are
  /// costed by it when set, by the analytical model's efficiencies when not.
  const kernel::KernelParameters* kernels = nullptr;
  /// The kernel model's GEMM power above idle, scaled by the serving calibration.
  KernelPowerScales kernel_power;
  std::optional<llm::WeightFormat> weights;  ///< default: the checkpoint's (16-bit ones as bf16)
  std::optional<llm::WeightFormat> kv;       ///< default: 16-bit (fp8 with fp8 weights on TRT-LLM)
  std::optional<int> gpus;
  std::optional<int> tp;
  std::optional<int> pp;
  std::optional<int> ep;
  std::optional<double> clock_mhz;  ///< default: boost
  /// Tokens of the longest sequence the deployment must hold (prompt + output), for the
  /// default tensor-parallel size and the memory check.
  double sequence_tokens = 0;
  SettingNames names = SettingNames::kFlag;
};

struct Deployment {
  const llm::Architecture* model = nullptr;
  const device::DeviceSpec* device = nullptr;
  const EngineProfile* engine = nullptr;
  const kernel::KernelParameters* kernels = nullptr;  ///< see DeploymentRequest::kernels
  KernelPowerScales kernel_power;                     ///< see DeploymentRequest::kernel_power
  int gpus = 1;                                       ///< all GPUs
  int replicas = 1;                                   ///< data-parallel copies: gpus / (tp · pp)
  llm::Sharding sharding;
  llm::WeightFormat weight_format = llm::WeightFormat::kBf16;
  llm::WeightFormat kv_format = llm::WeightFormat::kBf16;
  llm::StepFormats formats;
  device::OperatingPoint point;
  llm::MemoryPerGpu memory;
  double device_memory_bytes = 0;  ///< one GPU's memory
  double usable_bytes = 0;         ///< its share the engine uses (gpu_memory_fraction)
  double workspace_bytes = 0;      ///< activations and workspaces the engine reserves
  double kv_budget_bytes = 0;      ///< left for KV cache and states, per GPU
  /// What settle() chose or assumed, one line each (the tensor-parallel size it picked, a
  /// weight-only fallback, the KV-cache format).
  std::vector<std::string> notes;

  int gpus_per_replica() const { return sharding.tp * sharding.pp; }
  /// Sequences of `tokens` tokens each whose KV cache (and states) fit in one replica.
  double sequences_that_fit(double tokens) const;
};

/// Settles a deployment. Defaults: the weights in the checkpoint's format (bf16 for 16- and
/// 32-bit checkpoints), the KV cache in 16 bits (fp8 when the weights are fp8 and the engine is
/// TensorRT-LLM, as its FP8 builds are); `gpus` = tp · pp; tp = gpus / pp when gpus is given,
/// else the smallest power of two dividing the heads whose weights, workspace and one sequence
/// of `sequence_tokens` fit; pp = 1; ep = 1. Throws InvalidInput, naming the settings as `names`
/// spells them, for: a format the GPU can neither compute nor run weight-only (naming GPUs that
/// can), tp not dividing the attention heads (listing sizes that do), gpus not a multiple of
/// tp · pp, pp above the layer count, ep not dividing the experts or for a dense model, a model
/// whose weights do not fit (naming the smallest tp that would), a clock out of range.
Deployment settle(const DeploymentRequest& request);

}  // namespace nnergy::serve
