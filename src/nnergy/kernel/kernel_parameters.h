#pragma once

// What the kernel model takes beyond a device's datasheet: per GEMM format and engine, how
// close its kernels come to the peaks and what a kernel costs at least; and how board power
// follows a kernel's activity. Fitted by `nnergy calibrate --kernels` on measured kernel tables
// (calibration/kernel_fit.h) and read from data/kernel/calibrated.json; every number is
// shared by all GPUs, so that a GPU with a datasheet only is predicted the same way as a
// measured one.

#include <filesystem>
#include <map>
#include <optional>
#include <string>

#include "nnergy/kernel/gemm_format.h"

namespace nnergy::kernel {

enum class AttentionPhase;
struct AttentionFormat;

/// The name attention parameters and their ± go by: "attention prefill bf16/bf16".
std::string attention_parameters_key(AttentionPhase phase, const AttentionFormat& format);

/// Parameters of the GEMM time model of one format and engine (kernel/gemm_model.h).
struct GemmParameters {
  /// η_c: fraction of the units' peak a large GEMM's full tiles reach.
  double compute_efficiency = 0.75;
  /// η_m: fraction of the DRAM bandwidth a memory-bound GEMM (few rows) reaches.
  double memory_efficiency = 0.75;
  /// t0: fixed time of the kernel (launch inside a graph, prologue, epilogue), s.
  double latency_s = 4e-6;
  /// K½: reduction depth at which a tile spends as long in its prologue and epilogue as in
  /// its main loop (compute rate × K/(K+K½)).
  double k_half = 64;
  /// γ: a tile of area A runs at (A/A_max)^γ of a full tile's rate (smaller tiles reuse less).
  double tile_exponent = 0.3;
  /// β: share of the shorter of the compute and memory times that does not overlap the other.
  double overlap_loss = 0.1;
  /// Fixed time of the input-quantization kernel of formats that have one, s.
  double quantize_latency_s = 3e-6;
  int measurements = 0;   ///< rows fitted on (0: defaults or transferred)
  std::string fitted_on;  ///< which GPUs and tables
};

/// Parameters of the fused-attention time model of one phase, format and engine
/// (kernel/attention_model.h).
struct AttentionParameters {
  /// η_c: fraction of the tensor units' peak the products reach.
  double compute_efficiency = 0.5;
  /// η_x: fraction of the SMs' exponential rate (device::DeviceSpec::exp_per_clock_per_sm) the
  /// softmax reaches.
  double exp_efficiency = 0.8;
  /// η_m: fraction of the DRAM bandwidth reading the KV cache reaches.
  double memory_efficiency = 0.8;
  /// t0: fixed time of the kernel, s.
  double latency_s = 1e-5;
  /// Fixed SM time of one CTA (a query tile of one head; a sequence's KV head in decode), s.
  double cta_s = 1e-6;
  /// β: share of the shorter of the compute and memory times that does not overlap the other.
  double overlap_loss = 0.5;
  /// u: CTAs per SM a decode kernel needs in flight to saturate DRAM.
  double saturating_ctas = 1;
  int measurements = 0;
  std::string fitted_on;
};

/// Parameters of the collective time model of one library, op and link kind
/// (kernel/collective_model.h).
struct CollectiveParameters {
  double latency_s = 15e-6;  ///< t0: fixed time of the collective (launch, synchronisation), s
  double step_s = 1e-6;      ///< α: time per step of its algorithm (a ring hop), s
  double efficiency = 0.75;  ///< η: achieved fraction of the link's one-way bandwidth
  bool one_shot = false;     ///< an all-reduce that may read every peer's tensor in one step
  int measurements = 0;
  std::string fitted_on;
};

/// Board power of a kernel running steadily (kernel/kernel_power.h):
/// P = P_idle + (P_limit − P_idle)·(base + compute·u_c·w + memory·u_m), w the format's
/// activity weight; above the limit the clocks drop.
struct PowerParameters {
  double base = 0.15;     ///< share of (limit − idle) any running kernel adds (clocks up)
  double compute = 0.85;  ///< share at full tensor-unit activity (16-bit)
  double memory = 0.35;   ///< share at the full DRAM bandwidth
  /// Activity weight of a format's tensor work relative to 16-bit (energy per issued slot).
  std::map<std::string, double> format_weight;
  /// Exponent κ of dynamic power in the clock (P_dyn ∝ f^κ) when the power limit binds.
  double clock_exponent = 2;
  int measurements = 0;
  std::string fitted_on;
};

/// Out-of-sample accuracy of a fitted model, one line per quantity.
struct KernelAccuracy {
  std::string time;        ///< e.g. "GEMM time, leave-one-GPU-out: MAPE 9.8 %, median 1.01"
  std::string power;       ///< the same for power
  std::string attention;   ///< the same for attention time
  std::string collective;  ///< the same for collective time
  std::string moe;         ///< the same for MoE layers' time (and their power, not fitted on)
};

class KernelParameters {
 public:
  /// data/kernel/calibrated.json; the built-in defaults when the file does not exist.
  static KernelParameters load(const std::filesystem::path& data_dir);
  /// load(data_directory()), read once per process: the shipped fit that `predict` and the
  /// whole-network calibration cost their matrix products with.
  static const KernelParameters& shipped();
  /// Throws InvalidInput naming `source` for a document that is not a kernel calibration.
  static KernelParameters parse(const std::string& json_text, const std::string& source);
  std::string to_json_text() const;

  /// GEMM parameters by engine ("tensorrt-llm", "vllm", ...) and format name.
  std::map<std::string, std::map<std::string, GemmParameters>> gemm;
  /// Fused-MoE parameters by engine and format name: the grouped GEMMs of a MoE layer
  /// (kernel/moe_model.h) take these instead of the dense GEMMs'.
  std::map<std::string, std::map<std::string, GemmParameters>> moe;
  /// Attention parameters by engine and attention_parameters_key.
  std::map<std::string, std::map<std::string, AttentionParameters>> attention;
  /// Collective parameters by library ("nccl", or an engine's own all-reduce) and
  /// collective_parameters_key ("all-reduce", "all-gather pcie", ...).
  std::map<std::string, std::map<std::string, CollectiveParameters>> collective;
  PowerParameters power;
  std::string provenance;  ///< "fitted on N measured kernels (...)"
  /// Relative 1σ (log scale) of the leave-one-GPU-out time and power errors, by GEMM format
  /// name and attention_parameters_key.
  std::map<std::string, double> time_log_sigma;
  double power_log_sigma = 0;
  KernelAccuracy accuracy;

  /// The engine whose kernels a request without one takes.
  static constexpr const char* kDefaultEngine = "tensorrt-llm";

  /// The GEMM parameters of `format` under `engine`: the engine's own fit, else the default
  /// engine's, else another engine's, else the nearest fitted format's (fp8_block and int8 from
  /// fp8, nvfp4 from fp8, int4 weight-only from int8 weight-only, tf32 and weight-only from
  /// 16-bit), else the defaults. `*from`, when given, says which was taken when it is not the
  /// format's own.
  GemmParameters gemm_for(GemmFormat format, const std::string& engine,
                          std::string* from = nullptr) const;
  /// The fused-MoE parameters of `format` under `engine`, with gemm_for's fallbacks.
  GemmParameters moe_for(GemmFormat format, const std::string& engine,
                         std::string* from = nullptr) const;
  /// The attention parameters of `phase` and `format` under `engine`: the engine's own, else
  /// the default engine's, else those of the nearest format (a 16-bit cache's for an fp8 one,
  /// 16-bit products' for fp8 ones), else the defaults; `*from` as gemm_for.
  AttentionParameters attention_for(AttentionPhase phase, const AttentionFormat& format,
                                    const std::string& engine, std::string* from = nullptr) const;
  /// The collective parameters of `key` for `library`, else NCCL's, else the defaults; `*from`
  /// as gemm_for.
  CollectiveParameters collective_for(const std::string& library, const std::string& key,
                                      std::string* from = nullptr) const;
  /// Activity weight of `format` (PowerParameters::format_weight; 1 when not fitted).
  double power_weight(GemmFormat format) const;
};

}  // namespace nnergy::kernel
