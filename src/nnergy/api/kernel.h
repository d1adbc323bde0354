#pragma once

#include <optional>
#include <string>

#include "nnergy/core/setting_name.h"
#include "nnergy/report/kernel_report.h"

namespace nnergy::api {

/// What every `nnergy kernel` class takes: where the kernel runs and whose kernels.
struct KernelRequest {
  std::string device;
  std::string engine;  ///< whose kernels; empty: the default (tensorrt-llm)
  std::optional<double> clock_mhz;
  std::string devices_file;  ///< extra catalog; empty: none
  std::string command_line;
  SettingNames names = SettingNames::kKeyword;
};

/// What `nnergy kernel gemm` needs: one GEMM C[batch][m×n] = A[m×k]·B[k×n] on a device.
struct KernelGemmRequest : KernelRequest {
  double m = 0;
  double n = 0;
  double k = 0;
  double batch = 1;
  std::string format = "bf16";  ///< a kernel::GemmFormat name
};

/// What `nnergy kernel attention` needs: one fused attention kernel of `batch` sequences, each
/// with `queries` new tokens (the prompt chunk; 1 in decode) after `kv_len` cached ones.
struct KernelAttentionRequest : KernelRequest {
  std::string phase = "prefill";  ///< "prefill" or "decode"
  double batch = 1;
  std::optional<double> queries;  ///< unset: the whole --seq (prefill), 1 (decode)
  double seq = 0;                 ///< prefill: the prompt; decode: the context so far
  double heads = 32;
  double kv_heads = 8;
  double head_dim = 128;
  double window = 0;                  ///< sliding window, tokens; 0: full
  std::string precision = "bf16";     ///< the products: bf16 (fp16) or fp8
  std::string kv_precision = "bf16";  ///< the KV cache: bf16 (fp16) or fp8
};

/// What `nnergy kernel all-reduce|all-gather|reduce-scatter|all-to-all` needs: one collective
/// among the GPUs of one node.
struct KernelCollectiveRequest : KernelRequest {
  std::string op = "all-reduce";
  double bytes = 0;  ///< the message as nccl-tests sizes it
  int gpus = 8;
};

/// What `nnergy kernel moe` needs: one fused MoE layer (the routed experts) on one GPU.
struct KernelMoeRequest : KernelRequest {
  double tokens = 0;  ///< tokens entering the layer
  double hidden = 0;  ///< the model's hidden size
  double inter = 0;   ///< one expert's intermediate size (before tensor parallelism)
  double topk = 0;    ///< experts per token
  double experts = 0;
  double ep = 1;  ///< expert parallelism
  double tp = 1;  ///< tensor parallelism inside each expert
  /// "balanced", or "power-law" / "power-law:<α>" (α 1.01 when not given).
  std::string routing = "balanced";
  std::string format = "bf16";  ///< a kernel::GemmFormat name
};

/// The engines whose kernels `--engine` may name.
inline constexpr const char* kKernelEngines[] = {"tensorrt-llm", "vllm", "sglang", "pytorch"};

/// Time, power and energy of the GEMM by the kernel model (kernel/gemm_model.h) with the
/// calibrated parameters (data/kernel/calibrated.json). Throws InvalidInput naming the setting
/// for an unknown device, format or engine, a non-positive or absurd dimension, a format the
/// device cannot run and a clock it does not support.
report::KernelReport kernel_gemm(const KernelGemmRequest& request);

/// The same for a fused attention kernel (kernel/attention_model.h). Throws InvalidInput
/// naming the setting for an unknown phase or precision, a non-positive or absurd dimension,
/// query heads that are not a multiple of the KV heads, and fp8 products in decode or on a GPU
/// without fp8 units.
report::KernelReport kernel_attention(const KernelAttentionRequest& request);

/// The same for a fused MoE layer (kernel/moe_model.h). Throws InvalidInput naming the setting
/// for an unknown format or routing, a non-positive or absurd dimension, a top-k above the
/// experts, an expert parallelism that does not divide the experts or a tensor parallelism the
/// intermediate size, and a format the device cannot run.
report::KernelReport kernel_moe(const KernelMoeRequest& request);

/// The same for a collective (kernel/collective_model.h): the engine's own all-reduce kernel
/// where it has one, NCCL otherwise. Throws InvalidInput naming the setting for an unknown
/// collective, a size below 1 byte, and fewer than 2 GPUs or more than one node holds.
report::KernelReport kernel_collective(const KernelCollectiveRequest& request);

}  // namespace nnergy::api
