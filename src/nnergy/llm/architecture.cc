#include "nnergy/llm/architecture.h"

namespace nnergy::llm {

namespace {

using Int = std::int64_t;

// Query, key, value and output projections (and their biases and per-head norms).
Int attention_parameters(const Attention& a, Int hidden) {
  if (a.latent) {
    // DeepSeek-V2/V3 MLA: q_a (hidden → q_lora) with its norm, q_b (q_lora → heads·(nope+rope))
    // or one q projection; kv_a (hidden → kv_lora + rope) with the latent's norm; kv_b (kv_lora
    // → heads·(nope + v)); o (heads·v → hidden).
    const Int nope = a.head_dim - a.rope_head_dim;
    const Int q = a.q_lora_rank > 0 ? hidden * a.q_lora_rank + a.q_lora_rank +
                                          Int{a.q_lora_rank} * a.heads * a.head_dim
                                    : hidden * a.heads * a.head_dim;
    const Int kv = hidden * (a.kv_lora_rank + a.rope_head_dim) + a.kv_lora_rank +
                   Int{a.kv_lora_rank} * a.heads * (nope + a.value_head_dim);
    const Int o = Int{a.heads} * a.value_head_dim * hidden;
    return q + kv + o;
  }
  const Int q = Int{a.heads} * a.head_dim;
  const Int kv = Int{a.kv_heads} * a.head_dim;
  Int n = hidden * (q + 2 * kv) + q * hidden;
  if (a.qkv_bias) n += q + 2 * kv;
  if (a.output_bias) n += hidden;
  if (a.qk_norm) n += 2 * Int{a.head_dim};
  return n;
}

// in_proj (z, x, B, C, dt), conv1d over x, B, C, the per-head dt bias, A and D, the gated norm,
// out_proj.
Int mamba_parameters(const Mamba2& m, Int hidden) {
  const Int inner = m.inner();
  const Int bc = 2 * Int{m.groups} * m.state;
  const Int conv_channels = inner + bc;
  Int n = hidden * (2 * inner + bc + m.heads);
  n += conv_channels * m.conv_kernel + (m.conv_bias ? conv_channels : 0);
  n += 3 * Int{m.heads};
  n += inner;
  n += inner * hidden;
  return n;
}

Int dense_mlp_parameters(MlpKind kind, Int hidden, Int ffn, bool bias) {
  if (kind == MlpKind::kGated) return 3 * hidden * ffn + (bias ? 2 * ffn + hidden : 0);
  return 2 * hidden * ffn + (bias ? ffn + hidden : 0);
}

}  // namespace

int Architecture::layer_count() const {
  int n = 0;
  for (const LayerKind& k : layers) n += k.count;
  return n;
}

bool Architecture::is_moe() const {
  for (const LayerKind& k : layers) {
    if (k.mlp.kind == MlpKind::kMoe) return true;
  }
  return false;
}

int Architecture::attention_layer_count() const {
  int n = 0;
  for (const LayerKind& k : layers) {
    if (k.mixer == Mixer::kAttention) n += k.count;
  }
  return n;
}

ParameterCount Architecture::layer_parameters(const LayerKind& kind, Int hidden, bool layer_norm) {
  ParameterCount p;
  Int shared = Int{kind.norms} * hidden * (layer_norm ? 2 : 1);
  if (kind.mixer == Mixer::kAttention) shared += attention_parameters(kind.attention, hidden);
  if (kind.mixer == Mixer::kMamba2) shared += mamba_parameters(kind.mamba, hidden);
  const Mlp& m = kind.mlp;
  Int routed_total = 0;
  Int routed_active = 0;
  if (m.kind == MlpKind::kGated || m.kind == MlpKind::kPlain) {
    shared += dense_mlp_parameters(m.kind, hidden, m.ffn, m.bias);
  } else if (m.kind == MlpKind::kMoe) {
    shared += hidden * m.experts + (m.router_bias ? m.experts : 0);
    if (m.shared_ffn > 0)
      shared += dense_mlp_parameters(MlpKind::kGated, hidden, m.shared_ffn, false);
    if (m.shared_gate) shared += hidden;
    const Int expert = 3 * hidden * m.ffn + (m.expert_bias ? 2 * m.ffn + hidden : 0);
    routed_total = expert * m.experts;
    routed_active = expert * m.top_k;
  }
  p.total = shared + routed_total;
  p.active = shared + routed_active;
  return p;
}

ParameterCount Architecture::parameters() const {
  ParameterCount p;
  p.embedding = vocab * hidden;
  p.lm_head = tied_embeddings ? 0 : vocab * hidden;
  const Int final_norm = hidden * (layer_norm ? 2 : 1);
  p.total = p.embedding + p.lm_head + final_norm;
  p.active = p.total;
  for (const LayerKind& kind : layers) {
    const ParameterCount layer = layer_parameters(kind, hidden, layer_norm);
    p.total += layer.total * kind.count;
    p.active += layer.active * kind.count;
  }
  return p;
}

}  // namespace nnergy::llm
