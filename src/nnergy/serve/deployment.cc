#include "nnergy/serve/deployment.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "nnergy/core/error.h"
#include "nnergy/core/text.h"

namespace nnergy::serve {

namespace {

using llm::WeightFormat;

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

std::string flag(const DeploymentRequest& r, std::string_view setting) {
  return setting_name(r.names, setting);
}

std::string given(const DeploymentRequest& r, std::string_view setting, long long value) {
  return setting_with_value(r.names, setting, std::to_string(value));
}

// The checkpoint's format as the engine loads it: 32-bit checkpoints in 16 bits (vLLM's "auto").
WeightFormat checkpoint_format(const llm::Architecture& model) {
  const WeightFormat f = llm::parse_weight_format(model.weight_format, "weight_format");
  return f == WeightFormat::kFp32 ? WeightFormat::kBf16 : f;
}

std::vector<std::string> capable(const device::DeviceCatalog* catalog, WeightFormat format) {
  std::vector<std::string> ids;
  if (catalog == nullptr) return ids;
  for (const device::DeviceSpec& d : catalog->devices()) {
    if (d.vendor == "nvidia" || d.vendor == "amd") {
      if (llm::runs_on(format, d)) ids.push_back(d.id);
    }
  }
  return ids;
}

int attention_heads(const llm::Architecture& model) {
  for (const llm::LayerKind& k : model.layers)
    if (k.mixer == llm::Mixer::kAttention) return k.attention.heads;
  for (const llm::LayerKind& k : model.layers)
    if (k.mixer == llm::Mixer::kMamba2) return k.mamba.heads;
  return 1;
}

int routed_experts(const llm::Architecture& model) {
  for (const llm::LayerKind& k : model.layers)
    if (k.mlp.kind == llm::MlpKind::kMoe) return k.mlp.experts;
  return 0;
}

std::vector<int> divisors(int n) {
  std::vector<int> out;
  for (int d = 1; d <= n; ++d)
    if (n % d == 0) out.push_back(d);
  return out;
}

std::string list(const std::vector<int>& values) {
  std::string out;
  for (std::size_t i = 0; i < values.size(); ++i)
    out += (i ? ", " : "") + std::to_string(values[i]);
  return out;
}

// Fills the memory figures of `d` for its sharding.
void size_memory(Deployment& d) {
  d.memory = llm::memory_per_gpu(*d.model, d.sharding, d.formats);
  d.device_memory_bytes = d.device->memory_gib * kGiB;
  d.usable_bytes = d.device_memory_bytes * d.engine->gpu_memory_fraction;
  d.workspace_bytes = d.engine->activation_workspace_gib * kGiB;
  d.kv_budget_bytes = d.engine->memory_fraction_of_free
                          ? d.engine->gpu_memory_fraction *
                                (d.device_memory_bytes - d.memory.weights - d.workspace_bytes)
                          : d.usable_bytes - d.memory.weights - d.workspace_bytes;
}

}  // namespace

double Deployment::sequences_that_fit(double tokens) const {
  const double per_sequence =
      llm::kv_bytes_of_sequence(*model, sharding, formats, tokens) + memory.state_per_sequence;
  if (kv_budget_bytes <= 0) return 0;
  if (per_sequence <= 0) return 1e9;
  return kv_budget_bytes / per_sequence;
}

Deployment settle(const DeploymentRequest& r) {
  Deployment d;
  d.model = r.model;
  d.device = r.device;
  d.engine = r.engine;
  d.kernels = r.kernels;
  d.kernel_power = r.kernel_power;
  const llm::Architecture& model = *r.model;
  const device::DeviceSpec& device = *r.device;

  // Formats.
  d.weight_format = r.weights.value_or(checkpoint_format(model));
  const bool sixteen_bit = device.peak(device::Precision::kBf16).has_value();
  if (d.weight_format == WeightFormat::kBf16 && !sixteen_bit) {
    throw InvalidInput(
        fmt::format("{}: the {} has no bf16 units; use {} (the same weights in fp16)",
                    setting_with_value(r.names, "precision", "bf16"), device.id,
                    setting_with_value(r.names, "precision", "fp16")));
  }
  d.formats.weights = llm::format_math(d.weight_format, device, flag(r, "precision"),
                                       capable(r.catalog, d.weight_format));
  if (!d.formats.weights.note.empty()) d.notes.push_back(d.formats.weights.note);
  d.formats.sixteen_bit_math = sixteen_bit ? device::Precision::kBf16 : device::Precision::kFp16;
  const WeightFormat sixteen = sixteen_bit ? WeightFormat::kBf16 : WeightFormat::kFp16;
  d.formats.attention_weights = model.attention_unquantized
                                    ? llm::format_math(sixteen, device, flag(r, "precision"), {})
                                    : d.formats.weights;
  // Activations between kernels, collectives and Mamba states stay 16-bit whatever the weights
  // (only a native product's input is quantized); fp32 weights keep fp32 activations.
  d.formats.activation_bytes = d.weight_format == WeightFormat::kFp32 ? 4 : 2;
  d.formats.communication_bytes = d.formats.activation_bytes;
  d.formats.state_bytes = d.formats.activation_bytes;
  d.formats.attention_math = d.formats.sixteen_bit_math;
  const bool trt_fp8 = d.engine->id == "tensorrt-llm" && d.weight_format == WeightFormat::kFp8;
  d.kv_format = r.kv.value_or(trt_fp8 ? WeightFormat::kFp8 : sixteen);
  if (d.kv_format != WeightFormat::kBf16 && d.kv_format != WeightFormat::kFp16 &&
      d.kv_format != WeightFormat::kFp8) {
    throw InvalidInput(fmt::format("{} {}: expected bf16, fp16 or fp8 for the KV cache",
                                   flag(r, "kv_precision"), llm::to_string(d.kv_format)));
  }
  d.formats.kv_bytes = llm::bytes_per_weight(d.kv_format);
  if (!r.kv && trt_fp8) {
    d.notes.push_back(
        "KV cache in fp8, as TensorRT-LLM's FP8 builds keep it (--kv-precision to change)");
  }
  d.formats.eager_attention = d.engine->attention == AttentionKernels::kEager;
  d.formats.concat_kv_cache = d.engine->kv_cache_update == KvCacheUpdate::kConcat;

  // Parallelism.
  const int heads = attention_heads(model);
  const int pp = r.pp.value_or(1);
  if (pp < 1 || pp > model.layer_count()) {
    throw InvalidInput(fmt::format("{}: expected 1 to {} pipeline stages (the model's layers)",
                                   given(r, "pp", pp), model.layer_count()));
  }
  if (r.gpus && (*r.gpus < 1 || *r.gpus % pp != 0)) {
    throw InvalidInput(fmt::format("{}: expected a positive multiple of {} ({})",
                                   given(r, "gpus", *r.gpus), flag(r, "pp"), pp));
  }
  const int ep = std::max(1, r.ep.value_or(1));
  int tp = 0;
  if (r.tp) {
    tp = *r.tp;
    if (tp < 1 || heads % tp != 0) {
      throw InvalidInput(fmt::format(
          "{}: {} has {} attention heads; expected a tensor-parallel size that divides them ({})",
          given(r, "tp", tp), model.id, heads, list(divisors(heads))));
    }
    d.sharding = {tp, 1, pp};
  } else {
    // The smallest power of two dividing the heads (and, with --gpus, the GPUs of a pipeline;
    // with --ep, a multiple of it) that holds the weights and one sequence; with --gpus the
    // rest of the GPUs are replicas, as engines deploy a model that fits in fewer GPUs.
    const int most = r.gpus ? *r.gpus / pp : heads;
    int fitting = 0, last = 0;
    for (int t = 1; t <= most && t <= heads; t *= 2) {
      if (heads % t != 0 || (r.gpus && (*r.gpus / pp) % t != 0) || t % ep != 0) continue;
      last = t;
      d.sharding = {t, 1, pp};
      size_memory(d);
      if (d.sequences_that_fit(std::max(1.0, r.sequence_tokens)) >= 1) {
        fitting = t;
        break;
      }
    }
    // None fits: the largest tried, refused below with the size that would fit.
    tp = fitting > 0 ? fitting : std::max(1, last > 0 ? last : std::min(most, heads));
    d.sharding = {tp, 1, pp};
    const int replicas = r.gpus ? *r.gpus / (tp * pp) : 1;
    if (fitting > 0 && (tp > 1 || replicas > 1)) {
      d.notes.push_back(fmt::format(
          "tensor parallel {} chosen: the smallest that holds the weights ({:.1f} GiB per GPU) "
          "and one {:.0f}-token sequence{} ({} to choose)",
          tp, llm::memory_per_gpu(model, d.sharding, d.formats).weights / kGiB, r.sequence_tokens,
          replicas > 1 ? fmt::format("; {} GPUs serve as {} replicas of {} GPU{}", *r.gpus,
                                     replicas, tp * pp, tp * pp > 1 ? "s" : "")
                       : std::string(),
          flag(r, "tp")));
    }
  }
  const int per_replica = tp * pp;
  d.gpus = r.gpus.value_or(per_replica);
  if (d.gpus < 1 || d.gpus % per_replica != 0) {
    throw InvalidInput(
        fmt::format("{}: expected a multiple of tp × pp = {} × {} = {} (the GPUs of one replica)",
                    given(r, "gpus", d.gpus), tp, pp, per_replica));
  }
  d.replicas = d.gpus / per_replica;
  if (r.ep && *r.ep != 1) {
    const int experts = routed_experts(model);
    if (experts == 0) {
      throw InvalidInput(fmt::format("{}: {} has no experts (not a mixture-of-experts model)",
                                     given(r, "ep", *r.ep), model.id));
    }
    if (*r.ep < 1 || experts % *r.ep != 0 || tp % *r.ep != 0) {
      throw InvalidInput(
          fmt::format("{}: expected an expert-parallel size that divides the {} experts and the "
                      "tensor-parallel size {} (experts are spread over the GPUs of one replica)",
                      given(r, "ep", *r.ep), experts, tp));
    }
    d.sharding.ep = *r.ep;
  }

  // Clock.
  d.point.precision = d.formats.weights.math;
  d.point.clock_mhz = r.clock_mhz.value_or(device.clock.boost_mhz);
  if (r.clock_mhz) device.check_clock(*r.clock_mhz, flag(r, "clock_mhz"));

  // Memory.
  size_memory(d);
  if (d.kv_budget_bytes <= 0 || d.sequences_that_fit(std::max(1.0, r.sequence_tokens)) < 1) {
    std::string smallest = "no tensor-parallel size up to the heads fits";
    for (int t = tp * 2; t <= heads && t <= 1024; t *= 2) {
      if (heads % t != 0) continue;
      Deployment probe = d;
      probe.sharding.tp = t;
      size_memory(probe);
      if (probe.sequences_that_fit(std::max(1.0, r.sequence_tokens)) >= 1) {
        smallest = fmt::format("{} would fit ({} GPUs)",
                               setting_with_value(r.names, "tp", std::to_string(t)), t * pp);
        break;
      }
    }
    throw InvalidInput(fmt::format(
        "{} {} {}: {} needs {:.1f} GiB of weights per GPU plus {:.1f} GiB of workspace and the KV "
        "cache of one {:.0f}-token sequence; the {} has {:.1f} GiB, of which the {} engine uses "
        "{:.0f} %; {}",
        given(r, "tp", tp), given(r, "pp", pp),
        setting_with_value(r.names, "precision", std::string(llm::to_string(d.weight_format))),
        model.id, d.memory.weights / kGiB, d.workspace_bytes / kGiB, r.sequence_tokens, device.id,
        device.memory_gib, d.engine->id, d.engine->gpu_memory_fraction * 100, smallest));
  }
  return d;
}

}  // namespace nnergy::serve
