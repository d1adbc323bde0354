#pragma once

// Time, board power and energy of one fused attention kernel (FlashAttention-style prefill and
// paged decode) on a GPU from its datasheet and the parameters fitted on measured attention
// kernels (kernel/kernel_parameters.h):
//
//   t = t0 + max(t_c, t_m) + β·min(t_c, t_m)
//
// Prefill (causal, queries of one sequence against its cached and new keys):
// - the queries of each head in tiles of T_q rows (64; 16–32 for shorter prompts), each tile
//   against the key blocks up to its last query (within the window), in waves over the SMs;
// - t_c = (4·d·pairs/(η_c·peak) + pairs/(η_x·16·SMs·f))/wave use + waves·t_cta, pairs the
//   padded (query, key) pairs of all tiles and heads: the products on the tensor units and the
//   exponentials on the SMs' special-function units (16 per clock per SM; 32 on Blackwell Ultra);
// - t_m: queries, outputs and the keys and values read once over η_m of the bandwidth.
// Decode (one or a few new tokens per sequence against its KV cache):
// - t_m: the KV cache (and queries and outputs) over η_m of the bandwidth, as far as the
//   sequences × KV heads × splits of the cache keep enough SMs busy (u CTAs per SM saturate);
// - t_c: the products with each KV head's query rows padded to the 16 rows of a tensor tile,
//   the exponentials, and t_cta per sequence and KV head.

#include <string>

#include "nnergy/device/device_spec.h"
#include "nnergy/kernel/gemm_model.h"
#include "nnergy/kernel/kernel_parameters.h"

namespace nnergy::kernel {

enum class AttentionPhase { kPrefill, kDecode };
/// "prefill", "decode".
std::string_view to_string(AttentionPhase phase);

/// One attention kernel's work: `batch` sequences, each with `queries` new tokens attending to
/// `keys` keys (its cached tokens and the new ones).
struct AttentionShape {
  AttentionPhase phase = AttentionPhase::kPrefill;
  double batch = 1;
  double queries = 1;  ///< new tokens per sequence (the prompt chunk; 1 in decode)
  double keys = 1;     ///< keys per sequence, the new tokens included
  double heads = 32;   ///< query heads on this GPU
  double kv_heads = 8;
  double head_dim = 128;
  double window = 0;  ///< sliding window in tokens; 0: full causal
};

/// The precisions of its products and of the KV cache it reads.
struct AttentionFormat {
  bool fp8_math = false;   ///< the products in fp8 (prefill only), else 16-bit
  bool fp8_cache = false;  ///< the KV cache in fp8, else 16-bit
  /// "bf16/bf16", "bf16/fp8", "fp8/fp8": math/cache, the key of the fitted parameters.
  std::string name() const;
};

/// The useful (query, key) pairs of `shape` per head: causal, within the window.
double attention_pairs(const AttentionShape& shape);

/// Predicts one attention kernel with `engine`'s kernels on `device` at `clock_mhz` (boost when
/// 0). KernelEstimate's tile_m/tile_n are the query tile and key block (prefill). Throws
/// InvalidInput for a non-positive dimension, more heads than query heads, or fp8 math on a
/// GPU without fp8 units.
KernelEstimate predict_attention(const device::DeviceSpec& device, const AttentionShape& shape,
                                 const AttentionFormat& format, const KernelParameters& parameters,
                                 const std::string& engine = KernelParameters::kDefaultEngine,
                                 double clock_mhz = 0);

/// The time alone (no power, no cap) with explicit parameters: what the fit evaluates.
double attention_time_s(const device::DeviceSpec& device, const AttentionShape& shape,
                        const AttentionFormat& format, const AttentionParameters& p,
                        double clock_mhz);

}  // namespace nnergy::kernel
