#pragma once

// The work of one step of a language model on one GPU: the operations a serving engine runs for
// a batch of sequences that each add some new tokens to what their KV cache holds (prefill
// chunks and decode steps alike), as operator costs (graph::OpCost: flops, bytes, kernels) the
// analytical model predicts, plus the collectives of tensor and expert parallelism. Attention
// is costed as the fused kernels engines run (FlashAttention for prefill, paged attention for
// decode: no S×S tensor in memory); the KV cache is read once per step and layer.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "nnergy/device/precision.h"
#include "nnergy/graph/op_cost.h"
#include "nnergy/kernel/attention_model.h"
#include "nnergy/kernel/gemm_format.h"
#include "nnergy/kernel/gemm_model.h"
#include "nnergy/llm/architecture.h"
#include "nnergy/llm/weight_format.h"

namespace nnergy::llm {

/// Where an operation's time and energy count in the results.
enum class Part { kEmbedding, kAttention, kMlp, kMixer, kLmHead, kCommunication };
/// "embedding", "attention", "mlp", "mixer", "lm_head", "communication".
std::string_view to_string(Part part);

/// Sequences of one step that share their shape.
struct SequenceGroup {
  double count = 0;       ///< sequences
  double new_tokens = 0;  ///< tokens each adds in this step (1 in decode, a chunk in prefill)
  double cached = 0;      ///< tokens each already holds in its KV cache
  /// Whether the step computes logits for these sequences (decode, and the last prefill chunk).
  bool logits = true;
};

/// The sequences of one step.
struct StepShape {
  std::vector<SequenceGroup> groups;
  double tokens() const;      ///< Σ count · new_tokens
  double sequences() const;   ///< Σ count
  double logit_rows() const;  ///< sequences that need logits
};

/// How one replica of the model is split over its GPUs.
struct Sharding {
  int tp = 1;  ///< tensor parallel: heads, MLP width and vocabulary split
  int ep = 1;  ///< expert parallel: routed experts split (tokens exchanged all-to-all)
  int pp = 1;  ///< pipeline stages: layers split
};

/// Storage and math of weights, activations and the KV cache.
struct StepFormats {
  FormatMath weights;            ///< the matrix products' weights
  FormatMath attention_weights;  ///< q/k/v/o projections (bf16 when a checkpoint keeps them so)
  double kv_bytes = 2;           ///< bytes per KV-cache element
  /// Bytes per activation element between kernels (norms, residuals, element-wise, the new
  /// keys and values before the cache write): 16-bit whatever the weights (engines quantize
  /// only a matrix product's input: FormatMath::gemm_input_bytes), 4 for fp32 weights.
  double activation_bytes = 2;
  /// Bytes per element of the tensor- and expert-parallel collectives (all-reduce, all-to-all,
  /// pipeline sends): 16-bit, as engines exchange activations.
  double communication_bytes = 2;
  /// Bytes per element of a Mamba layer's recurrent and convolution states (the model's
  /// 16-bit dtype, as vLLM's mamba cache keeps them by default).
  double state_bytes = 2;
  device::Precision attention_math = device::Precision::kBf16;  ///< the attention kernels'
  /// 16-bit units of the device (bf16, else fp16): the lm_head and router, kept in 16 bits.
  device::Precision sixteen_bit_math = device::Precision::kBf16;
  /// Eager attention (Hugging Face without fused kernels): scores and probabilities written to
  /// and read from memory, masking and softmax as kernels of their own.
  bool eager_attention = false;
  /// The KV cache grown by concatenation: every step copies each layer's whole cache.
  bool concat_kv_cache = false;
};

/// One operation of the step on one GPU.
struct StepOp {
  std::string name;  ///< e.g. "attention (sliding 4096) + gated MLP: qkv projection"
  Part part = Part::kAttention;
  double count = 0;    ///< occurrences per step on one GPU (layers of its kind on one stage)
  graph::OpCost cost;  ///< one occurrence, inference pass
  device::Precision math = device::Precision::kBf16;  ///< the units of its matrix work
  /// A matrix product's shape (batch: the experts of a grouped GEMM, the heads of MLA's
  /// absorbed products) and format, for the kernel model; unset for the other operations.
  std::optional<kernel::GemmShape> gemm;
  kernel::GemmFormat gemm_format = kernel::GemmFormat::k16Bit;
  /// A fused prefill attention kernel's work, one shape per group of prompt chunks, for the
  /// kernel model; empty for the other operations, decode attention, and attention the kernel
  /// model does not cover (MLA, eager attention).
  std::vector<kernel::AttentionShape> attention;
  kernel::AttentionFormat attention_format;
};

/// A collective of the step.
enum class CollectiveKind { kAllReduce, kAllToAll, kAllGather, kSendReceive };
/// "all-reduce", "all-to-all", "all-gather", "send/receive".
std::string_view to_string(CollectiveKind kind);

struct Collective {
  std::string name;
  CollectiveKind kind = CollectiveKind::kAllReduce;
  double bytes = 0;  ///< payload per GPU (the tensor each GPU contributes), bytes
  int group = 1;     ///< GPUs taking part
  double count = 0;  ///< occurrences per step
};

/// The work of one step on one GPU of a replica.
struct StepWork {
  std::vector<StepOp> ops;
  std::vector<Collective> collectives;
};

/// The work of `shape` on one GPU of one pipeline stage (layers and the embedding/lm_head
/// divided evenly over the pp stages) under `sharding` and `formats`. Routed experts: a GPU
/// holds experts/ep of them and reads the weights of those the step's tokens choose (the
/// expected distinct experts of uniform routing, E·(1 − (1 − k/E)^T)).
StepWork step_work(const Architecture& model, const StepShape& shape, const Sharding& sharding,
                   const StepFormats& formats);

/// Memory of one GPU of a replica, bytes.
struct MemoryPerGpu {
  double weights = 0;       ///< the GPU's share of the weights
  double kv_per_token = 0;  ///< KV cache per token of one sequence (all its layers here)
  /// KV cache of a sequence that no longer grows past a window (sliding/chunked layers cap
  /// at their window): per-token bytes of the layers that keep growing, plus this fixed part.
  double kv_capped_per_sequence = 0;
  double state_per_sequence = 0;  ///< Mamba states (fixed per sequence)
};
/// Weights, KV cache and state of `model` on one GPU under `sharding` and `formats`.
MemoryPerGpu memory_per_gpu(const Architecture& model, const Sharding& sharding,
                            const StepFormats& formats);
/// KV bytes of one sequence of `tokens` tokens on one GPU (windowed layers capped).
double kv_bytes_of_sequence(const Architecture& model, const Sharding& sharding,
                            const StepFormats& formats, double tokens);

}  // namespace nnergy::llm
