#pragma once

// Serving engines as named parameter sets (data/llm/engines.json): what one release of vLLM,
// TensorRT-LLM, SGLang or Hugging Face Transformers does per step, and the host time it spends.

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace nnergy::serve {

/// Which steps run as CUDA graphs (no per-kernel host launch).
enum class CudaGraphs { kNone, kDecode, kAll };

/// How the KV cache grows.
enum class KvCacheUpdate {
  kPaged,   ///< new keys and values written into preallocated blocks
  kConcat,  ///< the whole cache concatenated anew every step (eager Hugging Face)
};

/// How attention is computed.
enum class AttentionKernels {
  kFused,  ///< FlashAttention / paged attention: scores never leave the chip
  kEager,  ///< scores and probabilities materialised in memory per head
};

struct EngineProfile {
  std::string id;  ///< e.g. "vllm"
  std::string release;
  std::vector<std::string> aliases;
  bool is_default = false;
  bool continuous_batching = true;  ///< false: one static batch from prefill to the last token
  bool chunked_prefill = true;      ///< prompts split into chunks mixed with decode steps
  int max_batched_tokens = 8192;    ///< tokens per step (0: a whole prompt per prefill step)
  int max_running_sequences = 256;  ///< the scheduler's cap on the running batch
  CudaGraphs cuda_graphs = CudaGraphs::kDecode;
  int cuda_graph_max_tokens = 256;  ///< largest step captured as a graph
  double kernels_per_op = 1;        ///< kernels launched per fused operation (eager: several)
  KvCacheUpdate kv_cache_update = KvCacheUpdate::kPaged;
  AttentionKernels attention = AttentionKernels::kFused;
  double host_per_step_s = 0.001;  ///< CPU time of the scheduler and input preparation per step
  /// CPU time per running sequence per step (scheduling, sampling, detokenising each one).
  double host_per_sequence_s = 0;
  double host_per_kernel_s = 8e-6;  ///< CPU time per kernel launched outside CUDA graphs
  bool host_overlapped = true;      ///< the CPU prepares the next step while the GPU runs
  double gpu_memory_fraction = 0.9;
  double activation_workspace_gib = 2;  ///< reserved for activations and library workspaces
  double collective_latency_scale_up_s = 12e-6;
  double collective_latency_pcie_s = 30e-6;
  double link_efficiency = 0.7;  ///< achieved share of a scale-up fabric's bandwidth
  double pcie_efficiency = 0.5;  ///< achieved share of PCIe's (through host bridges)
  /// The engine's memory fraction applies to the memory left after weights and workspace
  /// (TensorRT-LLM's kv_cache_free_gpu_mem_fraction), not to the whole (vLLM's
  /// gpu_memory_utilization).
  bool memory_fraction_of_free = false;
  std::vector<std::string> estimated;  ///< fields that are estimates
  std::string source;
  /// "host times fitted on N published measurements …" when nnergy calibrate --serve set them.
  std::string calibration;
};

class EngineCatalog {
 public:
  /// Reads data/llm/engines.json. Throws InvalidInput naming the file and field when malformed.
  /// (The fitted host times of data/llm/calibrated.json are applied by ServeCalibration.)
  static EngineCatalog load(const std::filesystem::path& data_dir);

  const std::vector<EngineProfile>& engines() const { return engines_; }
  const EngineProfile& default_engine() const;
  /// The engine named `name` (id or alias, any case), or InvalidInput naming `setting` with the
  /// accepted ids.
  const EngineProfile& find(const std::string& name, const std::string& setting) const;
  /// Replaces the profile with the same id (the calibration's fitted values).
  void replace(const EngineProfile& profile);

 private:
  std::vector<EngineProfile> engines_;
};

}  // namespace nnergy::serve
