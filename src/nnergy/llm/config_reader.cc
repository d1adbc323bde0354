#include "nnergy/llm/config_reader.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "nnergy/core/error.h"
#include "nnergy/core/json_document.h"
#include "nnergy/core/text.h"

namespace nnergy::llm {

namespace {

using json = nlohmann::json;
using Int = std::int64_t;
// Layers a config.json may declare (see Fields::layer_count).
constexpr Int kMaxLayers = 1024;

// Typed access to one config object; every message names the file and the field.
class Fields {
 public:
  Fields(const json& object, std::string where) : object_(object), where_(std::move(where)) {}

  const std::string& where() const { return where_; }

  bool has(const std::string& key) const {
    return object_.contains(key) && !object_.at(key).is_null();
  }

  // The first of `keys` present (config files of different families name a field differently).
  std::optional<std::string> first(std::initializer_list<const char*> keys) const {
    for (const char* k : keys) {
      if (has(k)) return std::string(k);
    }
    return std::nullopt;
  }

  Int positive(std::initializer_list<const char*> keys) const {
    const auto key = first(keys);
    if (!key) {
      throw InvalidInput(fmt::format("{}: missing field '{}' (expected a positive integer)", where_,
                                     *keys.begin()));
    }
    return positive_at(*key);
  }

  // The layer count, bounded before anything walks the layers one by one: the deepest published
  // decoders have about 130 (Llama-3.1-405B: 126).
  Int layer_count(std::initializer_list<const char*> keys) const {
    const Int count = positive(keys);
    if (count > kMaxLayers) {
      throw InvalidInput(fmt::format(
          "{}: field '{}': expected at most {} layers (the deepest published decoders have about "
          "130), found {}",
          where_, *first(keys), kMaxLayers, count));
    }
    return count;
  }

  Int positive_or(std::initializer_list<const char*> keys, Int fallback) const {
    const auto key = first(keys);
    return key ? positive_at(*key) : fallback;
  }

  Int non_negative_or(const char* key, Int fallback) const {
    if (!has(key)) return fallback;
    const json& v = object_.at(key);
    if (!v.is_number_integer() || v.get<Int>() < 0) {
      throw InvalidInput(fmt::format("{}: field '{}': expected a non-negative integer, found {}",
                                     where_, key, core::describe_json_value(v)));
    }
    return v.get<Int>();
  }

  bool boolean_or(const char* key, bool fallback) const {
    if (!has(key)) return fallback;
    const json& v = object_.at(key);
    if (!v.is_boolean()) {
      throw InvalidInput(fmt::format("{}: field '{}': expected true or false, found {}", where_,
                                     key, core::describe_json_value(v)));
    }
    return v.get<bool>();
  }

  std::string text_or(const char* key, const std::string& fallback) const {
    if (!has(key)) return fallback;
    const json& v = object_.at(key);
    if (!v.is_string()) {
      throw InvalidInput(fmt::format("{}: field '{}': expected a string, found {}", where_, key,
                                     core::describe_json_value(v)));
    }
    return v.get<std::string>();
  }

  const json& raw(const char* key) const { return object_.at(key); }

 private:
  Int positive_at(const std::string& key) const {
    const json& v = object_.at(key);
    // Some configs write integral sizes as 4096.0. The range is checked before the conversion,
    // which is undefined for a value an integer cannot hold; sizes past 10^9 are no model's
    // (the longest contexts are ~10^7 tokens).
    const bool in_range = v.is_number() && v.get<double>() >= 1 && v.get<double>() <= 1e9;
    const bool integral =
        in_range && (v.is_number_integer() || v.get<double>() == std::floor(v.get<double>()));
    if (!integral) {
      throw InvalidInput(fmt::format("{}: field '{}': expected a positive integer, found {}",
                                     where_, key, core::describe_json_value(v)));
    }
    return static_cast<Int>(v.get<double>());
  }

  const json& object_;
  std::string where_;
};

// Model types and what distinguishes them; every other field is read the same way.
struct Family {
  bool tied_default = false;  // tie_word_embeddings when the config omits it
  bool layer_norm = false;    // LayerNorm with bias instead of RMSNorm
  MlpKind mlp = MlpKind::kGated;
  bool qkv_bias_default = false;
  bool output_bias_default = false;
  bool mlp_bias_default = false;
  int norms = 2;
  bool qk_norm = false;
};

const std::map<std::string, Family>& families() {
  static const std::map<std::string, Family> kFamilies = {
      {"llama", {}},
      {"mistral", {}},
      {"mixtral", {}},
      {"qwen2", {false, false, MlpKind::kGated, true, false, false, 2, false}},
      {"qwen2_moe", {false, false, MlpKind::kGated, true, false, false, 2, false}},
      {"qwen3", {false, false, MlpKind::kGated, false, false, false, 2, true}},
      {"qwen3_moe", {false, false, MlpKind::kGated, false, false, false, 2, true}},
      {"gemma", {true, false, MlpKind::kGated, false, false, false, 2, false}},
      {"gemma2", {true, false, MlpKind::kGated, false, false, false, 4, false}},
      {"gemma3_text", {true, false, MlpKind::kGated, false, false, false, 4, true}},
      {"phi3", {}},
      {"phimoe", {false, true, MlpKind::kGated, true, true, false, 2, false}},
      {"phi3small", {true, true, MlpKind::kGated, true, true, true, 2, false}},
      {"starcoder2", {true, true, MlpKind::kPlain, true, true, true, 2, false}},
      {"gpt_neox", {false, true, MlpKind::kPlain, true, true, true, 2, false}},
      {"gptj", {false, true, MlpKind::kPlain, false, false, true, 1, false}},
      {"llama4_text", {}},
      {"gpt_oss", {false, false, MlpKind::kGated, true, true, false, 2, false}},
      {"deepseek_v2", {}},
      {"deepseek_v3", {}},
      {"nemotron_h", {false, false, MlpKind::kPlain, false, false, false, 1, false}},
  };
  return kFamilies;
}

// Multimodal configs whose language model is their text_config.
const std::set<std::string>& multimodal_types() {
  static const std::set<std::string> kTypes = {"llama4", "gemma3", "mistral3"};
  return kTypes;
}

std::string weight_format_of(const Fields& f) {
  if (f.has("quantization_config") && f.raw("quantization_config").is_object()) {
    const json& q = f.raw("quantization_config");
    // Read leniently: a field of an unexpected type is as good as absent here.
    const std::string method = q.contains("quant_method") && q["quant_method"].is_string()
                                   ? ascii_lower(q["quant_method"].get<std::string>())
                                   : std::string();
    const int bits = q.contains("bits") && q["bits"].is_number_integer() ? q["bits"].get<int>() : 0;
    const std::string text = ascii_lower(q.dump());
    if (method == "mxfp4") return "mxfp4";
    if (text.find("nvfp4") != std::string::npos) return "nvfp4";
    if (method == "fp8" || method == "fbgemm_fp8" || text.find("\"fp8\"") != std::string::npos ||
        text.find("float8") != std::string::npos || text.find("e4m3") != std::string::npos) {
      return "fp8";
    }
    if (method == "awq" || method == "gptq" || bits == 4) return "int4";
    if (bits == 8 || text.find("w8a8") != std::string::npos) return "int8";
  }
  const std::string dtype = ascii_lower(f.text_or("torch_dtype", f.text_or("dtype", "bfloat16")));
  if (dtype == "float16") return "fp16";
  if (dtype == "float32") return "fp32";
  return "bf16";
}

// "attention (sliding 4096) + gated MLP".
std::string describe(const LayerKind& k) {
  std::string mixer;
  switch (k.mixer) {
    case Mixer::kNone:
      break;
    case Mixer::kMamba2:
      mixer = "Mamba-2";
      break;
    case Mixer::kAttention:
      mixer = k.attention.latent ? "latent attention (MLA)" : "attention";
      if (k.attention.span == AttentionSpan::kSliding)
        mixer += fmt::format(" (sliding {})", k.attention.window);
      if (k.attention.span == AttentionSpan::kChunked)
        mixer += fmt::format(" (chunked {})", k.attention.window);
      break;
  }
  std::string mlp;
  switch (k.mlp.kind) {
    case MlpKind::kNone:
      break;
    case MlpKind::kGated:
      mlp = "gated MLP";
      break;
    case MlpKind::kPlain:
      mlp = "MLP";
      break;
    case MlpKind::kMoe:
      mlp = fmt::format("{} experts, top {}", k.mlp.experts, k.mlp.top_k);
      if (k.mlp.shared_ffn > 0) mlp += " + shared";
      break;
  }
  if (mixer.empty()) return mlp;
  if (mlp.empty()) return mixer;
  return mixer + " + " + mlp;
}

// Adds a layer of `kind` to `layers`, merging it with an identical earlier kind.
void add_layer(std::vector<LayerKind>& layers, LayerKind kind) {
  kind.name = describe(kind);
  for (LayerKind& k : layers) {
    if (k.name == kind.name && k.norms == kind.norms && k.attention.heads == kind.attention.heads &&
        k.mlp.ffn == kind.mlp.ffn) {
      ++k.count;
      return;
    }
  }
  kind.count = 1;
  layers.push_back(std::move(kind));
}

Attention read_attention(const Fields& f, const Family& family, Int hidden) {
  Attention a;
  a.heads = static_cast<int>(f.positive({"num_attention_heads", "n_head", "n_heads"}));
  a.kv_heads = static_cast<int>(f.positive_or({"num_key_value_heads", "n_kv_heads"}, a.heads));
  if (a.heads % a.kv_heads != 0) {
    throw InvalidInput(fmt::format(
        "{}: num_attention_heads {} is not a multiple of num_key_value_heads {} (expected query "
        "heads in equal groups per key/value head)",
        f.where(), a.heads, a.kv_heads));
  }
  a.head_dim =
      static_cast<int>(f.positive_or({"head_dim", "attention_head_dim"}, hidden / a.heads));
  a.value_head_dim = a.head_dim;
  const bool bias = f.boolean_or("attention_bias", family.qkv_bias_default);
  a.qkv_bias = f.boolean_or("use_bias", bias);
  a.output_bias =
      f.has("attention_bias") ? bias : f.boolean_or("use_bias", family.output_bias_default);
  a.qk_norm = family.qk_norm;
  if (f.has("q_lora_rank") || f.has("kv_lora_rank")) {
    a.latent = true;
    a.q_lora_rank = static_cast<int>(f.non_negative_or("q_lora_rank", 0));
    a.kv_lora_rank = static_cast<int>(f.positive({"kv_lora_rank"}));
    a.rope_head_dim = static_cast<int>(f.positive({"qk_rope_head_dim"}));
    a.head_dim = static_cast<int>(f.positive({"qk_nope_head_dim"})) + a.rope_head_dim;
    a.value_head_dim = static_cast<int>(f.positive({"v_head_dim"}));
    a.kv_heads = a.heads;
  }
  return a;
}

// Which layers slide and which see every token, from layer_types or the family's rule.
std::vector<AttentionSpan> attention_spans(const Fields& f, const std::string& type, int layers,
                                           Int* window) {
  std::vector<AttentionSpan> spans(static_cast<std::size_t>(layers), AttentionSpan::kFull);
  *window = f.non_negative_or("sliding_window", 0);
  if (f.has("layer_types") && f.raw("layer_types").is_array()) {
    const json& types = f.raw("layer_types");
    if (static_cast<int>(types.size()) != layers) {
      throw InvalidInput(
          fmt::format("{}: field 'layer_types': expected {} entries (num_hidden_layers), found {}",
                      f.where(), layers, types.size()));
    }
    for (int i = 0; i < layers; ++i) {
      const std::string t = types[static_cast<std::size_t>(i)].is_string()
                                ? types[static_cast<std::size_t>(i)].get<std::string>()
                                : "";
      if (t == "sliding_attention") {
        spans[static_cast<std::size_t>(i)] = AttentionSpan::kSliding;
      } else if (t != "full_attention") {
        throw InvalidInput(fmt::format(
            "{}: field 'layer_types'[{}]: expected \"sliding_attention\" or \"full_attention\", "
            "found {}",
            f.where(), i, core::describe_json_value(types[static_cast<std::size_t>(i)])));
      }
    }
  } else if (type == "gemma2") {
    for (int i = 0; i < layers; i += 2)
      spans[static_cast<std::size_t>(i)] = AttentionSpan::kSliding;
  } else if (type == "gemma3_text") {
    const Int pattern = f.positive_or({"sliding_window_pattern"}, 6);
    for (int i = 0; i < layers; ++i) {
      if ((i + 1) % pattern != 0) spans[static_cast<std::size_t>(i)] = AttentionSpan::kSliding;
    }
  } else if (type == "llama4_text") {
    *window = f.non_negative_or("attention_chunk_size", 0);
    for (int i = 0; i < layers; ++i) {
      const bool rope = f.has("no_rope_layers") && f.raw("no_rope_layers").is_array() &&
                                static_cast<int>(f.raw("no_rope_layers").size()) == layers
                            ? f.raw("no_rope_layers")[static_cast<std::size_t>(i)] == 1
                            : (i + 1) % 4 != 0;
      if (rope && *window > 0) spans[static_cast<std::size_t>(i)] = AttentionSpan::kChunked;
    }
  } else if ((type == "qwen2" || type == "qwen3" || type == "qwen2_moe" || type == "qwen3_moe") &&
             !f.boolean_or("use_sliding_window", false)) {
    *window = 0;
  } else if (*window > 0) {
    for (auto& s : spans) s = AttentionSpan::kSliding;
  }
  if (*window == 0) std::fill(spans.begin(), spans.end(), AttentionSpan::kFull);
  return spans;
}

Mlp dense_mlp(const Fields& f, const Family& family, Int hidden, Int ffn) {
  Mlp m;
  m.kind = family.mlp;
  m.ffn = ffn;
  m.bias = f.boolean_or("mlp_bias", f.boolean_or("use_bias", family.mlp_bias_default));
  (void)hidden;
  return m;
}

std::vector<LayerKind> read_layers(const Fields& f, const std::string& type, const Family& family,
                                   Int hidden) {
  std::vector<LayerKind> layers;
  if (type == "nemotron_h") {
    const std::string pattern = f.text_or("hybrid_override_pattern", "");
    const Int count = f.layer_count({"num_hidden_layers"});
    if (static_cast<Int>(pattern.size()) != count) {
      throw InvalidInput(fmt::format(
          "{}: field 'hybrid_override_pattern': expected {} characters (num_hidden_layers), one "
          "of M (Mamba-2), * (attention), - (MLP) per layer, found \"{}\"",
          f.where(), count, pattern));
    }
    for (std::size_t i = 0; i < pattern.size(); ++i) {
      LayerKind k;
      k.norms = 1;
      const char c = pattern[i];
      if (c == 'M') {
        k.mixer = Mixer::kMamba2;
        k.mamba.heads = static_cast<int>(f.positive({"mamba_num_heads"}));
        k.mamba.head_dim = static_cast<int>(f.positive({"mamba_head_dim"}));
        k.mamba.state = static_cast<int>(f.positive({"ssm_state_size"}));
        k.mamba.groups = static_cast<int>(f.positive({"n_groups"}));
        k.mamba.conv_kernel = static_cast<int>(f.positive_or({"conv_kernel"}, 4));
        k.mamba.conv_bias = f.boolean_or("use_conv_bias", true);
      } else if (c == '*') {
        k.mixer = Mixer::kAttention;
        k.attention = read_attention(f, family, hidden);
      } else if (c == '-') {
        k.mixer = Mixer::kNone;
        k.mlp = dense_mlp(f, family, hidden, f.positive({"intermediate_size"}));
      } else {
        throw InvalidInput(fmt::format(
            "{}: field 'hybrid_override_pattern'[{}]: expected M (Mamba-2), * (attention) or - "
            "(MLP), found '{}'",
            f.where(), i, std::string(1, c)));
      }
      add_layer(layers, std::move(k));
    }
    return layers;
  }

  const int count = static_cast<int>(f.layer_count({"num_hidden_layers", "n_layer", "n_layers"}));
  const Attention attention = read_attention(f, family, hidden);
  Int window = 0;
  const std::vector<AttentionSpan> spans = attention_spans(f, type, count, &window);
  const Int ffn = type == "phi3small"
                      ? f.positive({"ff_intermediate_size", "intermediate_size"})
                      : f.positive_or({"intermediate_size", "n_inner", "ffn_dim"}, 4 * hidden);

  // Which layers are mixtures of experts, and their experts' shapes.
  std::vector<bool> moe(static_cast<std::size_t>(count), false);
  Mlp experts;
  experts.kind = MlpKind::kMoe;
  Int dense_ffn = ffn;
  if (type == "mixtral" || type == "phimoe" || type == "gpt_oss") {
    experts.experts = static_cast<int>(f.positive({"num_local_experts"}));
    experts.top_k = static_cast<int>(f.positive({"num_experts_per_tok", "experts_per_token"}));
    experts.ffn = ffn;
    experts.router_bias = type == "gpt_oss";
    experts.expert_bias = type == "gpt_oss";
    std::fill(moe.begin(), moe.end(), true);
  } else if (type == "qwen2_moe" || type == "qwen3_moe") {
    experts.experts = static_cast<int>(f.positive({"num_experts"}));
    experts.top_k = static_cast<int>(f.positive({"num_experts_per_tok"}));
    experts.ffn = f.positive({"moe_intermediate_size"});
    experts.shared_ffn = f.non_negative_or("shared_expert_intermediate_size", 0);
    experts.shared_gate = experts.shared_ffn > 0;
    const Int step = f.positive_or({"decoder_sparse_step"}, 1);
    std::set<Int> dense_only;
    if (f.has("mlp_only_layers") && f.raw("mlp_only_layers").is_array()) {
      for (const json& v : f.raw("mlp_only_layers"))
        if (v.is_number_integer()) dense_only.insert(v.get<Int>());
    }
    for (int i = 0; i < count; ++i)
      moe[static_cast<std::size_t>(i)] = dense_only.count(i) == 0 && (i + 1) % step == 0;
  } else if (type == "deepseek_v2" || type == "deepseek_v3") {
    experts.experts = static_cast<int>(f.positive({"n_routed_experts"}));
    experts.top_k = static_cast<int>(f.positive({"num_experts_per_tok"}));
    experts.ffn = f.positive({"moe_intermediate_size"});
    experts.shared_ffn = f.non_negative_or("n_shared_experts", 0) * experts.ffn;
    experts.router_bias = type == "deepseek_v3";
    const Int first_dense = f.non_negative_or("first_k_dense_replace", 0);
    const Int freq = f.positive_or({"moe_layer_freq"}, 1);
    for (int i = 0; i < count; ++i)
      moe[static_cast<std::size_t>(i)] = i >= first_dense && i % freq == 0;
  } else if (type == "llama4_text") {
    experts.experts = static_cast<int>(f.positive({"num_local_experts"}));
    experts.top_k = static_cast<int>(f.positive({"num_experts_per_tok"}));
    experts.ffn = ffn;
    experts.shared_ffn = ffn;  // one shared expert as wide as a routed one
    dense_ffn = f.positive_or({"intermediate_size_mlp"}, ffn);
    const Int step = f.positive_or({"interleave_moe_layer_step"}, 1);
    for (int i = 0; i < count; ++i) moe[static_cast<std::size_t>(i)] = (i + 1) % step == 0;
  }
  if (experts.experts > 0 && (experts.top_k > experts.experts)) {
    throw InvalidInput(fmt::format("{}: num_experts_per_tok {} exceeds the {} experts", f.where(),
                                   experts.top_k, experts.experts));
  }

  for (int i = 0; i < count; ++i) {
    LayerKind k;
    k.norms = family.norms;
    k.mixer = Mixer::kAttention;
    k.attention = attention;
    k.attention.span = spans[static_cast<std::size_t>(i)];
    k.attention.window = k.attention.span == AttentionSpan::kFull ? 0 : window;
    k.mlp = moe[static_cast<std::size_t>(i)] ? experts : dense_mlp(f, family, hidden, dense_ffn);
    add_layer(layers, std::move(k));
  }
  return layers;
}

}  // namespace

const std::vector<std::string>& supported_model_types() {
  static const std::vector<std::string> kTypes = [] {
    std::vector<std::string> types;
    for (const auto& [type, family] : families()) types.push_back(type);
    for (const auto& type : multimodal_types()) types.push_back(type);
    types.push_back("gemma3_text");
    std::sort(types.begin(), types.end());
    types.erase(std::unique(types.begin(), types.end()), types.end());
    return types;
  }();
  return kTypes;
}

namespace {

// Sizes each within range can still multiply into a model no GPU could hold and counts that
// overflow 64 bits; a generous bound on the parameters (all matrices, in floating point) refuses
// them before anything counts in integers. The largest published models are ~2·10^12.
void check_plausible_size(const Architecture& a, const std::string& where) {
  long double bound = 2.0L * a.hidden * a.vocab;
  for (const LayerKind& k : a.layers) {
    const long double h = a.hidden;
    long double layer = 4.0L * h * h;
    layer += 2.0L * h * k.attention.heads * (k.attention.head_dim + k.attention.value_head_dim);
    layer += 2.0L * h * k.attention.kv_heads * (k.attention.head_dim + k.attention.value_head_dim);
    layer += 3.0L * h * k.mlp.ffn * std::max(1, k.mlp.experts) + 3.0L * h * k.mlp.shared_ffn;
    layer += 4.0L * h * k.mamba.inner() + 2.0L * h * k.mamba.groups * k.mamba.state;
    bound += layer * k.count;
  }
  if (bound > 1e15L) {
    throw InvalidInput(fmt::format(
        "{}: the sizes describe more than 10^15 parameters (hidden_size {}, vocab_size {}, {} "
        "layer kinds); check the config's sizes",
        where, a.hidden, a.vocab, a.layers.size()));
  }
}

}  // namespace

Architecture read_config(const json& config, const std::string& where) {
  if (!config.is_object()) {
    throw InvalidInput(where + ": expected a JSON object (a Hugging Face config.json)");
  }
  std::string type = config.contains("model_type") && config["model_type"].is_string()
                         ? config["model_type"].get<std::string>()
                         : "";
  if (type.empty()) {
    throw InvalidInput(where + ": missing field 'model_type' (expected one of " +
                       join_with_commas(supported_model_types()) + ")");
  }
  const json* object = &config;
  std::string text_where = where;
  if (multimodal_types().count(type) > 0) {
    if (!config.contains("text_config") || !config["text_config"].is_object()) {
      throw InvalidInput(fmt::format(
          "{}: model_type '{}' is multimodal: expected its language model in 'text_config'", where,
          type));
    }
    object = &config["text_config"];
    text_where = where + ": text_config";
    std::string inner = type + "_text";
    if (object->contains("model_type")) {
      const json& named = (*object)["model_type"];
      if (!named.is_string()) {
        throw InvalidInput(fmt::format("{}: field 'model_type': expected a string, found {}",
                                       text_where, core::describe_json_value(named)));
      }
      inner = named.get<std::string>();
    }
    type = inner == "gemma3" ? "gemma3_text" : inner;
    if (type == "mistral") type = "mistral";
  }
  const auto family = families().find(type);
  if (family == families().end()) {
    throw InvalidInput(fmt::format(
        "{}: model_type '{}' is not supported (supported: {}); a decoder of another family can "
        "be given as a config.json with the model_type of the family its layers match",
        where, type, join_with_commas(supported_model_types())));
  }
  const Fields f(*object, text_where);
  const Fields outer(config, where);
  Architecture a;
  a.id = where;
  a.model_type = type;
  a.hidden = f.positive({"hidden_size", "n_embd", "d_model"});
  a.vocab = f.positive({"vocab_size", "padded_vocab_size"});
  a.tied_embeddings = f.boolean_or(
      "tie_word_embeddings", outer.boolean_or("tie_word_embeddings", family->second.tied_default));
  a.layer_norm = family->second.layer_norm;
  a.max_context = f.positive_or({"max_position_embeddings", "n_positions", "seq_length"}, 4096);
  a.layers = read_layers(f, type, family->second, a.hidden);
  check_plausible_size(a, where);
  a.weight_format = weight_format_of(f.has("quantization_config") ? f : outer);
  if (a.weight_format == "mxfp4" || a.weight_format == "nvfp4") {
    // gpt-oss and NVIDIA's FP4 checkpoints keep attention in bf16 (modules_to_not_convert).
    const std::string q = (f.has("quantization_config") ? f.raw("quantization_config")
                                                        : outer.raw("quantization_config"))
                              .dump();
    a.attention_unquantized = q.find("self_attn") != std::string::npos;
  }
  return a;
}

Architecture parse_config(const std::string& text, const std::string& where) {
  json config;
  try {
    config = core::parse_json_document(text, where);
  } catch (const json::exception& e) {
    throw InvalidInput(where + ": not valid JSON (" + std::string(e.what()) + ")");
  }
  return read_config(config, where);
}

}  // namespace nnergy::llm
