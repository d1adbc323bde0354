#pragma once

// Measured kernels to fit the kernel model on: the GEMM rows of AIConfigurator's tables
// (data/calibration/kernels/aic_gemm.csv.gz, gzipped CSV; README there for how they were
// measured), with their GPU mapped to a catalog device and their software to an engine.

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "nnergy/device/device_catalog.h"
#include "nnergy/kernel/attention_model.h"
#include "nnergy/kernel/collective_model.h"
#include "nnergy/kernel/gemm_format.h"
#include "nnergy/kernel/gemm_model.h"
#include "nnergy/kernel/moe_model.h"

namespace nnergy::calibration {

/// One measured GEMM.
struct MeasuredGemm {
  std::string device_id;  ///< catalog id ("h100-sxm")
  std::string engine;     ///< "tensorrt-llm", "vllm"
  std::string software;   ///< as the table gives it ("trtllm-1.3.0rc20")
  kernel::GemmFormat format = kernel::GemmFormat::k16Bit;
  kernel::GemmShape shape;
  double latency_s = 0;
  std::optional<double> power_w;  ///< sustained board power, where measured
  std::string source;             ///< file and line
};

/// One measured fused-attention kernel (prefill or decode).
struct MeasuredAttention {
  std::string device_id;
  std::string engine;
  std::string software;
  kernel::AttentionShape shape;
  kernel::AttentionFormat format;
  double latency_s = 0;
  std::optional<double> power_w;        ///< sustained board power, where measured
  std::optional<double> kv_byte_count;  ///< the KV bytes the table gives (kv_gbps × latency)
  std::string source;                   ///< file and line
};

/// One measured fused MoE layer.
struct MeasuredMoe {
  std::string device_id;
  std::string engine;
  std::string software;
  kernel::GemmFormat format = kernel::GemmFormat::k16Bit;
  kernel::MoeShape shape;
  double latency_s = 0;
  std::optional<double> power_w;  ///< sustained board power, where measured
  std::string source;             ///< file and line
};

/// One measured collective.
struct MeasuredCollective {
  std::string device_id;
  std::string library;  ///< "nccl", or the engine whose custom all-reduce it is
  std::string software;
  kernel::CollectiveShape shape;
  double latency_s = 0;
  std::string source;  ///< file and line
};

/// One measured memory-bound kernel with its sustained board power: a decode (generation)
/// attention kernel streaming the KV cache, for the power model's DRAM share.
struct MeasuredStream {
  std::string device_id;
  std::string engine;
  double latency_s = 0;
  double byte_count = 0;  ///< DRAM bytes (the KV cache read)
  double flop_count = 0;  ///< q·k and p·v
  double power_w = 0;
  std::string source;  ///< file and line
};

/// The catalog device of a table's GPU name ("h100_sxm" → "h100-sxm"); nullopt for a GPU the
/// mapping does not know.
std::optional<std::string> catalog_id_of_table_gpu(const std::string& gpu);

/// Reads every row of `path` (gzipped or plain CSV with the header of aic_gemm.csv.gz) whose
/// GPU, format and engine nnergy knows; the others are counted in `*skipped`. Throws
/// InvalidInput naming the file and line for a file that cannot be read or a malformed row.
std::vector<MeasuredGemm> read_gemm_table(const std::filesystem::path& path,
                                          const device::DeviceCatalog& catalog,
                                          int* skipped = nullptr);

/// The engine name of PyTorch's own kernels (cuBLAS through torch.matmul and nn.Linear).
inline constexpr const char* kPytorchEngine = "pytorch";

/// Reads the fp32 linear and bmm rows of `path` (the header of neusight_ops.csv.gz: PyTorch
/// 2.1 on CUDA 12.1, TF32 off, so the CUDA cores' SGEMM kernels) for GPUs nnergy knows, as
/// engine kPytorchEngine's fp32 GEMMs. Throws InvalidInput as read_gemm_table does.
std::vector<MeasuredGemm> read_pytorch_fp32_gemm_table(const std::filesystem::path& path,
                                                       const device::DeviceCatalog& catalog);

/// The decode-attention rows of `rows` that have board power and the KV bandwidth, as streaming
/// kernels: bytes the KV bandwidth times the latency, flops q·k and p·v over the cache.
std::vector<MeasuredStream> decode_attention_streams(const std::vector<MeasuredAttention>& rows);

/// decode_attention_streams of read_attention_table(path).
std::vector<MeasuredStream> read_decode_attention_power(const std::filesystem::path& path,
                                                        const device::DeviceCatalog& catalog);

/// Reads the prefill (context) and decode (generation) attention rows of `path` (the header of
/// aic_attention.csv.gz) without a quality flag, for GPUs and engines nnergy knows. A decode
/// row's kv_len is the cache before the new token. Throws InvalidInput as read_gemm_table does.
std::vector<MeasuredAttention> read_attention_table(const std::filesystem::path& path,
                                                    const device::DeviceCatalog& catalog);

/// Reads the fused MoE layers of `path` (the header of aic_moe.csv.gz) for GPUs, formats and
/// engines nnergy knows; TensorRT-LLM's min-latency kernels (the same layers timed by a second
/// code path) are left out. "power_law_<α>" routing becomes MoeShape::power_law_alpha. Throws
/// InvalidInput as read_gemm_table does.
std::vector<MeasuredMoe> read_moe_table(const std::filesystem::path& path,
                                        const device::DeviceCatalog& catalog);

/// Reads the collectives of `path` (the header of aic_comm.csv.gz) that engines run in their CUDA
/// graphs (NCCL, and their custom all-reduce kernels; the eager variants are left out), for
/// GPUs nnergy knows. Throws InvalidInput as read_gemm_table does.
std::vector<MeasuredCollective> read_collective_table(const std::filesystem::path& path,
                                                      const device::DeviceCatalog& catalog);

/// The lines of a gzipped (or plain) text file. Throws InvalidInput naming it when it cannot
/// be read.
std::vector<std::string> read_text_lines(const std::filesystem::path& path);

}  // namespace nnergy::calibration
