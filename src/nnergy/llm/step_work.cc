#include "nnergy/llm/step_work.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace nnergy::llm {

namespace {

using graph::OpClass;
using graph::OpCost;
using graph::PassCost;

PassCost pass(double macs, double flops, double bytes, double kernels) {
  PassCost p;
  p.mac_count = macs;
  p.flop_count = flops;
  p.byte_count = bytes;
  p.kernel_count = kernels;
  return p;
}

OpCost op(OpClass op_class, PassCost work, double reduction_length = 0) {
  OpCost c;
  c.op_class = op_class;
  c.known = true;
  c.inference = work;
  c.training_forward = work;
  c.reduction_length = reduction_length;
  return c;
}

// A matrix product of M rows, reduction K and N columns on one GPU: weights read once, the
// input read at `input_bytes` per element (quantized in W8A8/W4A4), the output written at
// `output_bytes` (16-bit).
OpCost gemm(double m, double k, double n, double weight_bytes, double input_bytes,
            double output_bytes) {
  const double macs = m * k * n;
  return op(
      OpClass::kMatrix,
      pass(macs, 2 * macs, k * n * weight_bytes + m * k * input_bytes + m * n * output_bytes, 1),
      k);
}

// Keys each of `q` new tokens after `cached` tokens attends to, summed: every earlier token and
// itself (full), the last `window` (sliding), or those of its own `window`-sized chunk.
double attention_pairs(double cached, double q, AttentionSpan span, double window) {
  if (q <= 0) return 0;
  const double first = cached + 1;  // keys seen by the first new token (full span)
  const double last = cached + q;
  if (span == AttentionSpan::kFull || window <= 0) return q * (first + last) / 2;
  if (span == AttentionSpan::kSliding) {
    // min(p, W) for p = first .. last.
    if (last <= window) return q * (first + last) / 2;
    if (first >= window) return q * window;
    const double rising = window - first + 1;  // p = first .. W
    return rising * (first + window) / 2 + (q - rising) * window;
  }
  // Chunked: position p (1-based) sees ((p − 1) mod W) + 1 keys. Sum over whole chunks and the
  // partial ones at both ends.
  const auto prefix = [&](double n) {  // Σ_{p=1..n} (((p − 1) mod W) + 1)
    const double full = std::floor(n / window);
    const double rest = n - full * window;
    return full * window * (window + 1) / 2 + rest * (rest + 1) / 2;
  };
  return prefix(last) - prefix(cached);
}

// Tokens of the cache an attention layer reads for one sequence (each once per step).
double kv_tokens_read(double cached, double q, AttentionSpan span, double window) {
  const double total = cached + q;
  if (span == AttentionSpan::kFull || window <= 0) return total;
  if (span == AttentionSpan::kSliding) return std::min(total, window + q - 1);
  return std::min(total, window);  // chunked: at most one chunk
}

// Cache tokens a layer keeps for a sequence of `tokens` tokens.
double kv_tokens_kept(double tokens, const Attention& a) {
  if (a.span == AttentionSpan::kFull || a.window <= 0) return tokens;
  return std::min(tokens, static_cast<double>(a.window));
}

// Bytes one cached token takes in one attention layer on one GPU.
double kv_bytes_per_token(const Attention& a, const Sharding& s, double kv_bytes) {
  if (a.latent) return static_cast<double>(a.kv_lora_rank + a.rope_head_dim) * kv_bytes;
  const double kv_heads_here = std::max(1.0, static_cast<double>(a.kv_heads) / s.tp);
  return 2 * kv_heads_here * a.head_dim * kv_bytes;
}

class Builder {
 public:
  Builder(const Architecture& model, const StepShape& shape, const Sharding& sharding,
          const StepFormats& formats)
      : model_(model), shape_(shape), s_(sharding), f_(formats) {
    tokens_ = shape.tokens();
  }

  StepWork build() {
    const double ab = f_.activation_bytes;
    const double h = static_cast<double>(model_.hidden);
    const double stage = 1.0 / s_.pp;
    // Embedding lookup (vocabulary-parallel under TP: an all-reduce joins the shards).
    add("embedding lookup", Part::kEmbedding, stage,
        op(OpClass::kDataMovement, pass(0, 0, 2 * tokens_ * h * ab, 1)));
    if (s_.tp > 1) {
      collective("embedding", CollectiveKind::kAllReduce, tokens_ * h * f_.communication_bytes,
                 s_.tp, stage);
    }
    for (const LayerKind& kind : model_.layers) layer(kind, kind.count * stage);
    // Final norm, lm_head over the rows that need logits, sampling.
    const double rows = shape_.logit_rows();
    const double vocab_here = static_cast<double>(model_.vocab) / s_.tp;
    add("final norm", Part::kLmHead, stage, norm(tokens_));
    // Engines keep the lm_head (and the router) in 16 bits in quantized checkpoints.
    add_gemm("lm_head", Part::kLmHead, stage, rows, h, vocab_here, sixteen_bit());
    if (s_.tp > 1)
      collective("logits", CollectiveKind::kAllGather, rows * vocab_here * 4, s_.tp, stage);
    add("sampling", Part::kLmHead, stage,
        op(OpClass::kElementwise,
           pass(0, 5 * rows * model_.vocab, 3 * rows * model_.vocab * 4, 3)));
    if (s_.pp > 1) {
      collective("pipeline activations", CollectiveKind::kSendReceive,
                 tokens_ * h * f_.communication_bytes, 2, 1.0);
    }
    return std::move(work_);
  }

 private:
  void add(std::string name, Part part, double count, OpCost cost,
           device::Precision math = device::Precision::kBf16) {
    if (count <= 0) return;
    StepOp o;
    o.name = std::move(name);
    o.part = part;
    o.count = count;
    o.cost = std::move(cost);
    o.math = math;
    work_.ops.push_back(std::move(o));
  }

  // A matrix product of `batch` × (m rows, reduction k, n columns) in `format`: its operator
  // cost for the analytical model and its shape for the kernel model. None when m is 0 (no
  // rows need it, e.g. logits in a prefill chunk that is not a prompt's last).
  void add_gemm(std::string name, Part part, double count, double m, double k, double n,
                const FormatMath& format, double batch = 1) {
    if (m <= 0) return;
    const double wb = bytes_per_weight(format.format);
    add(std::move(name), part, count,
        gemm(m * batch, k, n, wb * batch, format.gemm_input_bytes, f_.activation_bytes),
        format.math);
    StepOp& o = work_.ops.back();
    o.gemm = kernel::GemmShape{std::max(1.0, m), n, k, std::max(1.0, batch)};
    o.gemm_format = gemm_format(format);
  }

  // The lm_head and router: 16-bit weights whatever the checkpoint's (engines keep them so).
  FormatMath sixteen_bit() const {
    FormatMath m;
    m.format = WeightFormat::kBf16;
    m.math = f_.sixteen_bit_math;
    m.gemm_input_bytes = f_.activation_bytes;
    return m;
  }

  void collective(std::string name, CollectiveKind kind, double bytes, int group, double count) {
    if (count <= 0 || group <= 1 || bytes <= 0) return;
    work_.collectives.push_back(Collective{std::move(name), kind, bytes, group, count});
  }

  // RMSNorm/LayerNorm fused with the residual add: reads x and the residual, writes both.
  OpCost norm(double rows) const {
    const double n = rows * static_cast<double>(model_.hidden);
    OpCost c = op(OpClass::kNormalization, pass(0, 8 * n, 4 * n * f_.activation_bytes, 1));
    c.statistics = graph::StatisticsPasses::kAll;
    return c;
  }

  void layer(const LayerKind& kind, double count) {
    const std::string prefix = kind.name + ": ";
    if (kind.mixer == Mixer::kAttention) attention(kind.attention, prefix, count);
    if (kind.mixer == Mixer::kMamba2) mamba(kind.mamba, prefix, count);
    if (kind.mlp.kind != MlpKind::kNone) mlp(kind.mlp, prefix, count);
  }

  void attention(const Attention& a, const std::string& prefix, double count) {
    const double h = static_cast<double>(model_.hidden);
    const double ab = f_.activation_bytes;
    const FormatMath& w = f_.attention_weights;
    const double heads = static_cast<double>(a.heads) / s_.tp;
    add(prefix + "attention norm", Part::kAttention, count, norm(tokens_));
    if (a.latent) {
      latent_projections(a, prefix, count, heads);
    } else {
      const double kv_heads = std::max(1.0, static_cast<double>(a.kv_heads) / s_.tp);
      const double n = (heads + 2 * kv_heads) * a.head_dim;
      add_gemm(prefix + "qkv projection", Part::kAttention, count, tokens_, h, n, w);
      // RoPE on q and k, and the new keys and values written to the paged cache.
      add(prefix + "rope + cache write", Part::kAttention, count,
          op(OpClass::kElementwise,
             pass(0, 6 * tokens_ * (heads + kv_heads) * a.head_dim,
                  tokens_ * n * ab + tokens_ * 2 * kv_heads * a.head_dim * f_.kv_bytes, 1)));
    }
    attention_kernels(a, prefix, count, heads);
    const double v_width = heads * (a.latent ? a.value_head_dim : a.head_dim);
    add_gemm(prefix + "output projection", Part::kAttention, count, tokens_, v_width, h, w);
    if (s_.tp > 1) {
      collective(prefix + "attention all-reduce", CollectiveKind::kAllReduce,
                 tokens_ * h * f_.communication_bytes, s_.tp, count);
    }
  }

  // MLA projections: q and kv down-projections (replicated over TP, as engines keep them),
  // their up-projections; in decode the key and value up-projections are absorbed into the
  // query and output (per head: nope × kv_lora and kv_lora × v), in prefill keys and values are
  // decompressed for the cached tokens too.
  void latent_projections(const Attention& a, const std::string& prefix, double count,
                          double heads) {
    const double h = static_cast<double>(model_.hidden);
    const FormatMath& w = f_.attention_weights;
    const double nope = a.head_dim - a.rope_head_dim;
    if (a.q_lora_rank > 0) {
      add_gemm(prefix + "q down-projection", Part::kAttention, count, tokens_, h, a.q_lora_rank, w);
      add_gemm(prefix + "q up-projection", Part::kAttention, count, tokens_, a.q_lora_rank,
               heads * a.head_dim, w);
    } else {
      add_gemm(prefix + "q projection", Part::kAttention, count, tokens_, h, heads * a.head_dim, w);
    }
    add_gemm(prefix + "kv down-projection", Part::kAttention, count, tokens_, h,
             a.kv_lora_rank + a.rope_head_dim, w);
    const double decode_tokens = decode_rows();
    const double prefill_tokens = tokens_ - decode_tokens;
    if (decode_tokens > 0) {
      // One product per head (batched over the heads).
      add_gemm(prefix + "absorbed key up-projection", Part::kAttention, count, decode_tokens, nope,
               a.kv_lora_rank, w, heads);
      add_gemm(prefix + "absorbed value up-projection", Part::kAttention, count, decode_tokens,
               a.kv_lora_rank, a.value_head_dim, w, heads);
    }
    if (prefill_tokens > 0) {
      double context = 0;
      for (const SequenceGroup& g : shape_.groups)
        if (g.new_tokens > 1) context += g.count * (g.cached + g.new_tokens);
      add_gemm(prefix + "kv up-projection", Part::kAttention, count, context, a.kv_lora_rank,
               heads * (nope + a.value_head_dim), w);
    }
  }

  // Rows of the step that are decode tokens (one new token per sequence).
  double decode_rows() const {
    double rows = 0;
    for (const SequenceGroup& g : shape_.groups)
      if (g.new_tokens <= 1) rows += g.count * g.new_tokens;
    return rows;
  }

  void attention_kernels(const Attention& a, const std::string& prefix, double count,
                         double heads) {
    const double ab = f_.activation_bytes;
    const double kv_token_bytes = kv_bytes_per_token(a, s_, f_.kv_bytes);
    double flops_prefill = 0, bytes_prefill = 0, flops_decode = 0, bytes_decode = 0;
    const double window = static_cast<double>(a.window);
    for (const SequenceGroup& g : shape_.groups) {
      const double pairs = g.count * attention_pairs(g.cached, g.new_tokens, a.span, window);
      const double kv = g.count * kv_tokens_read(g.cached, g.new_tokens, a.span, window);
      const bool decode = g.new_tokens <= 1;
      // Per (query, key) pair and head: q·k over the key width, p·v over the value width; MLA in
      // decode works on the latent (kv_lora + rope for scores, kv_lora for values).
      const double qk = a.latent && decode ? a.kv_lora_rank + a.rope_head_dim : a.head_dim;
      const double pv = a.latent ? (decode ? a.kv_lora_rank : a.value_head_dim) : a.head_dim;
      const double flops = 2 * pairs * heads * (qk + pv);
      const double q_bytes = g.count * g.new_tokens * heads * (qk + pv) * ab;
      double kv_bytes = kv * kv_token_bytes;
      if (a.latent && !decode) {
        // Prefill reads the decompressed keys and values of its context.
        kv_bytes = kv * heads * (a.head_dim + a.value_head_dim) * ab;
      }
      (decode ? flops_decode : flops_prefill) += flops;
      (decode ? bytes_decode : bytes_prefill) += q_bytes + kv_bytes;
    }
    if (f_.eager_attention) {
      // Scores written, masked, soft-maxed and read again, per head: about six passes over them.
      double pairs = 0;
      for (const SequenceGroup& g : shape_.groups)
        pairs += g.count * attention_pairs(g.cached, g.new_tokens, a.span, window);
      add(prefix + "attention scores, mask and softmax (eager)", Part::kAttention, count,
          op(OpClass::kElementwise, pass(0, 5 * pairs * heads, 6 * pairs * heads * ab, 4)));
    }
    if (f_.concat_kv_cache) {
      double cached = 0;
      for (const SequenceGroup& g : shape_.groups) cached += g.count * (g.cached + g.new_tokens);
      add(prefix + "KV cache concatenation", Part::kAttention, count,
          op(OpClass::kDataMovement, pass(0, 0, 2 * cached * kv_token_bytes, 2)));
    }
    const double reduction = a.latent ? a.kv_lora_rank : a.head_dim;
    if (flops_prefill > 0) {
      add(prefix + "attention (prefill, fused)", Part::kAttention, count,
          op(OpClass::kMatrix, pass(flops_prefill / 2, flops_prefill, bytes_prefill, 1), reduction),
          f_.attention_math);
      prefill_shapes(a, heads);
    }
    if (flops_decode > 0) {
      // Paged decode attention: a split-K kernel and its reduction.
      add(prefix + "attention (decode, paged)", Part::kAttention, count,
          op(OpClass::kMatrix, pass(flops_decode / 2, flops_decode, bytes_decode, 2), reduction),
          f_.attention_math);
    }
  }

  // The prefill kernels' shapes on the op just added, one per group of prompt chunks, for the
  // kernel model. None for MLA, chunked local attention (Llama 4), eager attention, or query
  // heads that do not split evenly over the GPU's KV heads (those stay on the analytical model).
  // Decode attention stays there too: the serving fit's streaming efficiency predicts published
  // decode better than the kernel model's decode fit transfers between GPUs (docs/kernel-model.md).
  void prefill_shapes(const Attention& a, double heads) {
    const double kv_heads = std::max(1.0, static_cast<double>(a.kv_heads) / s_.tp);
    if (a.latent || a.span == AttentionSpan::kChunked || f_.eager_attention || heads < 1 ||
        heads != std::floor(heads) || std::fmod(heads, kv_heads) != 0)
      return;
    StepOp& o = work_.ops.back();
    o.attention_format.fp8_math = f_.attention_math == device::Precision::kFp8;
    o.attention_format.fp8_cache = f_.kv_bytes <= 1;
    for (const SequenceGroup& g : shape_.groups) {
      if (g.count <= 0 || g.new_tokens <= 1) continue;
      kernel::AttentionShape s;
      s.phase = kernel::AttentionPhase::kPrefill;
      s.batch = g.count;
      s.queries = g.new_tokens;
      s.keys = g.cached + g.new_tokens;
      s.heads = heads;
      s.kv_heads = kv_heads;
      s.head_dim = a.head_dim;
      s.window = a.span == AttentionSpan::kSliding ? static_cast<double>(a.window) : 0;
      o.attention.push_back(s);
    }
  }

  void mamba(const Mamba2& m, const std::string& prefix, double count) {
    const double h = static_cast<double>(model_.hidden);
    const double ab = f_.activation_bytes;
    const double inner = static_cast<double>(m.inner()) / s_.tp;
    const double heads = static_cast<double>(m.heads) / s_.tp;
    const double bc = 2.0 * m.groups * m.state;
    const double state_bytes = heads * m.head_dim * m.state * f_.state_bytes;
    add(prefix + "mixer norm", Part::kMixer, count, norm(tokens_));
    add_gemm(prefix + "Mamba-2 in projection", Part::kMixer, count, tokens_, h,
             2 * inner + bc + heads, f_.weights);
    add(prefix + "causal conv1d", Part::kMixer, count,
        op(OpClass::kElementwise, pass(0, 2 * tokens_ * (inner + bc) * m.conv_kernel,
                                       2 * tokens_ * (inner + bc) * ab, 1)));
    // The state-space scan: per token and head, the state (head_dim × state) decays, takes the
    // input's outer product and is contracted with C; decode reads and writes each state once.
    const double sequences = shape_.sequences();
    add(prefix + "selective scan (SSD)", Part::kMixer, count,
        op(OpClass::kElementwise,
           pass(0, 6 * tokens_ * heads * m.head_dim * m.state,
                2 * sequences * state_bytes + tokens_ * (2 * inner + bc) * ab, 2)));
    add(prefix + "gated norm", Part::kMixer, count,
        op(OpClass::kNormalization, pass(0, 6 * tokens_ * inner, 3 * tokens_ * inner * ab, 1)));
    add_gemm(prefix + "Mamba-2 out projection", Part::kMixer, count, tokens_, inner, h, f_.weights);
    if (s_.tp > 1) {
      collective(prefix + "mixer all-reduce", CollectiveKind::kAllReduce,
                 tokens_ * h * f_.communication_bytes, s_.tp, count);
    }
  }

  void mlp(const Mlp& m, const std::string& prefix, double count) {
    const double h = static_cast<double>(model_.hidden);
    const double ab = f_.activation_bytes;
    add(prefix + "MLP norm", Part::kMlp, count, norm(tokens_));
    if (m.kind == MlpKind::kGated || m.kind == MlpKind::kPlain) {
      const double ffn = static_cast<double>(m.ffn) / s_.tp;
      const double up = m.kind == MlpKind::kGated ? 2 * ffn : ffn;
      add_gemm(prefix + (m.kind == MlpKind::kGated ? "gate/up projection" : "up projection"),
               Part::kMlp, count, tokens_, h, up, f_.weights);
      add(prefix + "activation", Part::kMlp, count,
          op(OpClass::kElementwise, pass(0, 8 * tokens_ * ffn, tokens_ * (up + ffn) * ab, 1)));
      add_gemm(prefix + "down projection", Part::kMlp, count, tokens_, ffn, h, f_.weights);
    } else {
      experts(m, prefix, count);
    }
    if (s_.tp > 1) {
      collective(prefix + "MLP all-reduce", CollectiveKind::kAllReduce,
                 tokens_ * h * f_.communication_bytes, s_.tp, count);
    }
  }

  void experts(const Mlp& m, const std::string& prefix, double count) {
    const double h = static_cast<double>(model_.hidden);
    const double ab = f_.activation_bytes;
    const double e = m.experts;
    const double k = m.top_k;
    // The router (kept in 16 bits by engines) and top-k selection.
    add_gemm(prefix + "router", Part::kMlp, count, tokens_, h, e, sixteen_bit());
    add(prefix + "top-k routing", Part::kMlp, count,
        op(OpClass::kElementwise, pass(0, 4 * tokens_ * e, tokens_ * e * 4 * 2, 2)));
    // Experts on this GPU: E/ep of them, each 1/(tp/ep) of its width when TP also splits them.
    const int ep = std::max(1, s_.ep);
    const double width_split = std::max(1.0, static_cast<double>(s_.tp) / ep);
    const double local_experts = e / ep;
    const double ffn = static_cast<double>(m.ffn) / width_split;
    const double pairs = tokens_ * k / ep;  // token–expert pairs computed here (balanced)
    const double touched = local_experts * (1 - std::pow(1 - k / e, tokens_));
    add(prefix + "expert dispatch (permute)", Part::kMlp, count,
        op(OpClass::kDataMovement, pass(0, 0, 2 * pairs * h * ab, 1)));
    // Grouped GEMMs: the experts the tokens chose, each over its share of the pairs.
    const double groups = std::max(1.0, touched);
    add_gemm(prefix + "experts gate/up (grouped GEMM)", Part::kMlp, count, pairs / groups, h,
             2 * ffn, f_.weights, groups);
    add(prefix + "experts activation", Part::kMlp, count,
        op(OpClass::kElementwise, pass(0, 8 * pairs * ffn, pairs * 3 * ffn * ab, 1)));
    add_gemm(prefix + "experts down (grouped GEMM)", Part::kMlp, count, pairs / groups, ffn, h,
             f_.weights, groups);
    add(prefix + "expert combine (unpermute)", Part::kMlp, count,
        op(OpClass::kDataMovement, pass(0, pairs * h, 2 * pairs * h * ab, 1)));
    if (ep > 1) {
      const double cb = f_.communication_bytes;
      collective(prefix + "expert dispatch all-to-all", CollectiveKind::kAllToAll,
                 tokens_ * k / ep * h * cb, ep, count);
      collective(prefix + "expert combine all-to-all", CollectiveKind::kAllToAll,
                 tokens_ * k / ep * h * cb, ep, count);
    }
    if (m.shared_ffn > 0) {
      const double shared = static_cast<double>(m.shared_ffn) / s_.tp;
      add_gemm(prefix + "shared expert gate/up", Part::kMlp, count, tokens_, h, 2 * shared,
               f_.weights);
      add_gemm(prefix + "shared expert down", Part::kMlp, count, tokens_, shared, h, f_.weights);
    }
  }

  const Architecture& model_;
  const StepShape& shape_;
  Sharding s_;
  StepFormats f_;
  double tokens_ = 0;
  StepWork work_;
};

}  // namespace

std::string_view to_string(Part part) {
  switch (part) {
    case Part::kEmbedding:
      return "embedding";
    case Part::kAttention:
      return "attention";
    case Part::kMlp:
      return "mlp";
    case Part::kMixer:
      return "mixer";
    case Part::kLmHead:
      return "lm_head";
    case Part::kCommunication:
      return "communication";
  }
  return "attention";
}

std::string_view to_string(CollectiveKind kind) {
  switch (kind) {
    case CollectiveKind::kAllReduce:
      return "all-reduce";
    case CollectiveKind::kAllToAll:
      return "all-to-all";
    case CollectiveKind::kAllGather:
      return "all-gather";
    case CollectiveKind::kSendReceive:
      return "send/receive";
  }
  return "all-reduce";
}

double StepShape::tokens() const {
  double n = 0;
  for (const SequenceGroup& g : groups) n += g.count * g.new_tokens;
  return n;
}

double StepShape::sequences() const {
  double n = 0;
  for (const SequenceGroup& g : groups) n += g.count;
  return n;
}

double StepShape::logit_rows() const {
  double n = 0;
  for (const SequenceGroup& g : groups) n += g.logits ? g.count : 0;
  return n;
}

StepWork step_work(const Architecture& model, const StepShape& shape, const Sharding& sharding,
                   const StepFormats& formats) {
  return Builder(model, shape, sharding, formats).build();
}

MemoryPerGpu memory_per_gpu(const Architecture& model, const Sharding& s,
                            const StepFormats& formats) {
  MemoryPerGpu m;
  const double wb = bytes_per_weight(formats.weights.format);
  const double attention_wb = bytes_per_weight(formats.attention_weights.format);
  const double h = static_cast<double>(model.hidden);
  const ParameterCount p = model.parameters();
  // Embedding and lm_head in 16 bits, split over TP; layers' weights in their formats.
  double bytes = static_cast<double>(p.embedding + p.lm_head) * 2 / s.tp;
  for (const LayerKind& kind : model.layers) {
    LayerKind attention_only = kind;
    attention_only.mlp.kind = MlpKind::kNone;
    LayerKind mlp_only = kind;
    mlp_only.mixer = Mixer::kNone;
    mlp_only.norms = 0;
    const double attention_part = static_cast<double>(
        Architecture::layer_parameters(attention_only, model.hidden, model.layer_norm).total);
    const double mlp_part = static_cast<double>(
        Architecture::layer_parameters(mlp_only, model.hidden, model.layer_norm).total);
    const double per_layer = attention_part * attention_wb / s.tp + mlp_part * wb / s.tp;
    bytes += per_layer * kind.count;
    if (kind.mixer == Mixer::kAttention) {
      const double per_token = kv_bytes_per_token(kind.attention, s, formats.kv_bytes);
      if (kind.attention.span == AttentionSpan::kFull || kind.attention.window <= 0) {
        m.kv_per_token += per_token * kind.count;
      } else {
        m.kv_capped_per_sequence +=
            per_token * kind.count * static_cast<double>(kind.attention.window);
      }
    }
    if (kind.mixer == Mixer::kMamba2) {
      const Mamba2& mm = kind.mamba;
      const double heads = static_cast<double>(mm.heads) / s.tp;
      m.state_per_sequence +=
          kind.count * (heads * mm.head_dim * mm.state * formats.state_bytes +
                        (static_cast<double>(mm.inner()) / s.tp + 2.0 * mm.groups * mm.state) *
                            (mm.conv_kernel - 1) * formats.state_bytes);
    }
  }
  (void)h;
  m.weights = bytes / s.pp;
  m.kv_per_token /= s.pp;
  m.kv_capped_per_sequence /= s.pp;
  m.state_per_sequence /= s.pp;
  return m;
}

double kv_bytes_of_sequence(const Architecture& model, const Sharding& s,
                            const StepFormats& formats, double tokens) {
  double bytes = 0;
  for (const LayerKind& kind : model.layers) {
    if (kind.mixer != Mixer::kAttention) continue;
    bytes += kind.count * kv_tokens_kept(tokens, kind.attention) *
             kv_bytes_per_token(kind.attention, s, formats.kv_bytes);
  }
  return bytes / s.pp;
}

}  // namespace nnergy::llm
