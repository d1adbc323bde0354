#pragma once

// The architecture of a decoder-only language model as `nnergy serve` needs it: no weights, only
// the shapes that decide its work (Hugging Face config.json fields, read by config_reader.h).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace nnergy::llm {

/// How a layer mixes tokens.
enum class Mixer {
  kNone,       ///< an MLP-only layer (Nemotron-H's "-")
  kAttention,  ///< softmax attention over a KV cache
  kMamba2,     ///< a Mamba-2 state-space layer: a fixed-size state per sequence, no KV cache
};

/// Which earlier tokens an attention layer sees.
enum class AttentionSpan {
  kFull,     ///< every earlier token (causal)
  kSliding,  ///< the last `window` tokens (Mistral v0.1, Gemma 2/3 local layers, gpt-oss)
  kChunked,  ///< tokens of the same `window`-sized chunk (Llama 4's local layers)
};

/// One attention layer's shapes.
struct Attention {
  int heads = 0;           ///< query heads
  int kv_heads = 0;        ///< key/value heads (grouped-query attention when fewer than `heads`)
  int head_dim = 0;        ///< per-head width of queries and keys
  int value_head_dim = 0;  ///< per-head width of values (equal to head_dim except in MLA)
  bool qkv_bias = false;
  bool output_bias = false;
  bool qk_norm = false;  ///< a norm with weights on q and k per head (Qwen3)
  AttentionSpan span = AttentionSpan::kFull;
  std::int64_t window = 0;  ///< tokens seen by a sliding or chunked layer
  /// Multi-head latent attention (DeepSeek-V2/V3): keys and values are decompressed from a
  /// latent of kv_lora_rank (+ the decoupled RoPE key of rope_head_dim), which is what the cache
  /// holds; queries from a latent of q_lora_rank (0: a plain projection).
  bool latent = false;
  int q_lora_rank = 0;
  int kv_lora_rank = 0;
  int rope_head_dim = 0;  ///< qk_rope_head_dim; head_dim is qk_nope + qk_rope
};

/// The feed-forward part of a layer.
enum class MlpKind {
  kNone,   ///< a mixer-only layer (Nemotron-H's "M" and "*")
  kGated,  ///< act(x·W_gate) ⊙ (x·W_up) · W_down (SwiGLU, GeGLU): three matrices
  kPlain,  ///< act(x·W_up) · W_down: two matrices (GPT-J, GPT-NeoX, StarCoder2, Nemotron-H)
  kMoe,    ///< a router and `experts` gated experts, `top_k` per token, plus shared experts
};

struct Mlp {
  MlpKind kind = MlpKind::kNone;
  std::int64_t ffn = 0;  ///< intermediate width of the dense MLP, or of one routed expert
  bool bias = false;
  // Mixture of experts.
  int experts = 0;
  int top_k = 0;
  std::int64_t shared_ffn = 0;  ///< total intermediate width of the shared experts (0: none)
  bool shared_gate = false;     ///< a sigmoid gate on the shared expert (Qwen2-MoE)
  bool router_bias = false;
  bool expert_bias = false;  ///< biases in the experts' matrices (gpt-oss)
};

/// A Mamba-2 mixer's shapes (Nemotron-H).
struct Mamba2 {
  int heads = 0;
  int head_dim = 0;
  int state = 0;   ///< ssm_state_size
  int groups = 0;  ///< n_groups of B and C
  int conv_kernel = 4;
  bool conv_bias = true;
  std::int64_t inner() const { return static_cast<std::int64_t>(heads) * head_dim; }
};

/// Layers of one kind and how many of them the model has.
struct LayerKind {
  std::string name;  ///< e.g. "attention (sliding 4096) + gated MLP"
  int count = 0;
  Mixer mixer = Mixer::kAttention;
  Attention attention;
  Mamba2 mamba;
  Mlp mlp;
  int norms = 2;  ///< norm layers of width `hidden` per layer (4 in Gemma 2/3, 1 in GPT-J)
};

/// Parameter counts, elements.
struct ParameterCount {
  std::int64_t total = 0;
  std::int64_t active = 0;  ///< used per token (all but the routed experts not chosen)
  std::int64_t embedding = 0;
  std::int64_t lm_head = 0;  ///< 0 when tied to the embedding
};

/// A decoder-only language model.
struct Architecture {
  std::string id;          ///< Hugging Face id, or the config file's path
  std::string model_type;  ///< config.json's model_type, e.g. "llama"
  std::string source;      ///< where the configuration comes from (with its citation)
  std::int64_t hidden = 0;
  std::int64_t vocab = 0;
  bool tied_embeddings = false;
  bool layer_norm = false;        ///< LayerNorm with bias (else RMSNorm, weight only)
  std::int64_t max_context = 0;   ///< max_position_embeddings
  std::vector<LayerKind> layers;  ///< kinds in model order of first appearance, with counts
  /// The checkpoint's weight format as published ("bf16", "fp8", "mxfp4", ...).
  std::string weight_format = "bf16";
  /// Parts of the checkpoint kept in 16 bits when the weights are quantized (gpt-oss keeps
  /// attention, router, embedding and lm_head in bf16).
  bool attention_unquantized = false;
  /// Published parameter counts, billions, and their source (catalog models only).
  std::optional<double> published_total_b;
  std::optional<double> published_active_b;
  std::string published_source;
  /// The published figure is a size class from the model's name ("70B" for 68.98 B), not a count.
  bool published_size_class = false;
  /// The published total counts a vision encoder too (the architecture is the text decoder).
  bool published_includes_vision = false;
  /// The published active count leaves out the input embedding (a lookup, no multiplications).
  bool published_active_excludes_embedding = false;

  int layer_count() const;
  /// Parameters from the shapes (see architecture.cc for what each layer kind holds).
  ParameterCount parameters() const;
  /// Parameters of one layer of `kind`: all, and those one token uses.
  static ParameterCount layer_parameters(const LayerKind& kind, std::int64_t hidden,
                                         bool layer_norm);
  /// True when some layer is a mixture of experts.
  bool is_moe() const;
  /// Attention layers with a cache that grows with the context (full or sliding).
  int attention_layer_count() const;
};

}  // namespace nnergy::llm
