#include "nnergy/kernel/attention_model.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "nnergy/core/error.h"
#include "nnergy/kernel/kernel_power.h"

namespace nnergy::kernel {

namespace {

// Query rows per prefill tile: 64, or the next power of two from 16 for shorter prompts (the
// kernels libraries pick for short sequences).
constexpr double kQueryTile = 64;
constexpr double kSmallestQueryTile = 16;
// Rows of one tensor-core tile: a decode step's query rows of one KV head are padded to it.
constexpr double kTensorRows = 16;
// Keys per split of a decode kernel that splits the cache across SMs (flash-decoding).
constexpr double kDecodeSplitKeys = 256;
// Bytes of the 16-bit queries and outputs.
constexpr double kActivationBytes = 2;
// Below this fraction of the boost clock the SMs cannot keep DRAM saturated.
constexpr double kMemorySaturationClockRatio = 0.5;

struct Times {
  double compute_s = 0;  ///< t_c (the products, the exponentials and the CTAs' fixed time)
  double tensor_s = 0;   ///< the products' part of t_c
  double memory_s = 0;
  double total_s = 0;
  double tile = 0;
  double waves = 0;
  double ctas = 0;
  double padded_pairs = 0;  ///< per head
  double bytes = 0;
};

double dram_bytes(const AttentionShape& s, const AttentionFormat& f) {
  const double cache_bytes = f.fp8_cache ? 1 : 2;
  const double keys = s.window > 0 ? std::min(s.keys, s.window + s.queries - 1) : s.keys;
  return s.batch * (s.queries * s.heads * s.head_dim * 2 * kActivationBytes +
                    keys * s.kv_heads * s.head_dim * 2 * cache_bytes);
}

double peak_of(const device::DeviceSpec& device, const AttentionFormat& f) {
  if (f.fp8_math) return device.peak(device::Precision::kFp8).value_or(0);
  return device.peak(units(device, GemmFormat::k16Bit)).value_or(0);
}

Times prefill_times(const device::DeviceSpec& device, const AttentionShape& s,
                    const AttentionFormat& f, const AttentionParameters& p, double clock_ratio) {
  Times t;
  const double sms = std::max(1, device.sm_count);
  t.tile = std::min(kQueryTile,
                    std::max(kSmallestQueryTile, std::exp2(std::ceil(std::log2(s.queries)))));
  const double tiles = std::ceil(s.queries / t.tile);
  // Each query tile reads the key blocks up to its last query, within the window (one block
  // more where the window does not start on a block).
  const double cached = s.keys - s.queries;
  double blocks = 0;
  if (s.window <= 0) {
    // Tiles 1 … n−1 end on a tile boundary after the cache; the last at the last key.
    blocks = (tiles - 1) * std::ceil(cached / t.tile) + (tiles - 1) * tiles / 2 +
             std::ceil(s.keys / t.tile);
  } else {
    const double window_blocks = std::ceil(s.window / t.tile) + 1;
    for (double i = 1; i <= tiles; ++i)
      blocks +=
          std::min(window_blocks, std::ceil((cached + std::min(s.queries, i * t.tile)) / t.tile));
  }
  const double pairs = t.tile * t.tile * blocks;
  t.padded_pairs = pairs;
  t.ctas = s.batch * s.heads * tiles;
  t.waves = std::ceil(t.ctas / sms);
  const double wave_use = t.ctas / (t.waves * sms);
  const double clock_hz = device.clock.boost_mhz * 1e6 * clock_ratio;
  const double all_pairs = s.batch * s.heads * pairs;
  t.tensor_s = 4 * s.head_dim * all_pairs /
               (p.compute_efficiency * peak_of(device, f) * clock_ratio) / wave_use;
  const double exp_s =
      all_pairs / (p.exp_efficiency * device.exp_per_clock_per_sm * sms * clock_hz);
  t.compute_s = t.tensor_s + exp_s / wave_use + t.waves * p.cta_s / clock_ratio;
  t.bytes = dram_bytes(s, f);
  return t;
}

Times decode_times(const device::DeviceSpec& device, const AttentionShape& s,
                   const AttentionFormat& f, const AttentionParameters& p, double clock_ratio) {
  Times t;
  const double sms = std::max(1, device.sm_count);
  const double keys = s.window > 0 ? std::min(s.keys, s.window + s.queries - 1) : s.keys;
  const double group = s.heads / s.kv_heads;
  const double rows = kTensorRows * std::ceil(s.queries * group / kTensorRows);
  const double sequences_heads = s.batch * s.kv_heads;
  const double splits = std::min(std::ceil(keys / kDecodeSplitKeys),
                                 std::max(1.0, std::ceil(2 * sms / sequences_heads)));
  t.ctas = sequences_heads * splits;
  t.waves = std::ceil(t.ctas / sms);
  t.padded_pairs = rows * keys / group;  // per query head
  const double clock_hz = device.clock.boost_mhz * 1e6 * clock_ratio;
  t.tensor_s = 4 * s.head_dim * sequences_heads * rows * keys /
               (p.compute_efficiency * peak_of(device, f) * clock_ratio);
  const double exp_s = s.batch * s.queries * s.heads * keys /
                       (p.exp_efficiency * device.exp_per_clock_per_sm * sms * clock_hz);
  t.compute_s = t.tensor_s + exp_s + p.cta_s * sequences_heads / sms / clock_ratio;
  t.bytes = dram_bytes(s, f);
  const double parallel = std::min(1.0, t.ctas / (sms * p.saturating_ctas));
  t.memory_s = t.bytes / (p.memory_efficiency * device.memory_bandwidth_byte_per_s * parallel *
                          std::min(1.0, clock_ratio / kMemorySaturationClockRatio));
  return t;
}

Times times(const device::DeviceSpec& device, const AttentionShape& s, const AttentionFormat& f,
            const AttentionParameters& p, double clock_mhz) {
  const double clock_ratio = clock_mhz / device.clock.boost_mhz;
  Times t = s.phase == AttentionPhase::kDecode ? decode_times(device, s, f, p, clock_ratio)
                                               : prefill_times(device, s, f, p, clock_ratio);
  if (s.phase == AttentionPhase::kPrefill) {
    t.memory_s = t.bytes / (p.memory_efficiency * device.memory_bandwidth_byte_per_s *
                            std::min(1.0, clock_ratio / kMemorySaturationClockRatio));
  }
  t.total_s = p.latency_s + std::max(t.compute_s, t.memory_s) +
              p.overlap_loss * std::min(t.compute_s, t.memory_s);
  return t;
}

void check(const device::DeviceSpec& device, const AttentionShape& s, const AttentionFormat& f) {
  for (const auto& [name, value] :
       {std::pair{"batch", s.batch}, std::pair{"queries", s.queries}, std::pair{"keys", s.keys},
        std::pair{"heads", s.heads}, std::pair{"KV heads", s.kv_heads},
        std::pair{"head dimension", s.head_dim}}) {
    if (!(value >= 1) || !std::isfinite(value))
      throw InvalidInput(
          fmt::format("attention {} must be a positive whole number, got {}", name, value));
  }
  if (!(s.window >= 0) || !std::isfinite(s.window))
    throw InvalidInput(
        fmt::format("attention window must be 0 (full) or positive, got {}", s.window));
  if (s.queries > s.keys)
    throw InvalidInput(fmt::format(
        "attention: {} new tokens per sequence cannot attend to fewer keys ({}); the keys "
        "include the new tokens",
        s.queries, s.keys));
  if (s.kv_heads > s.heads || std::fmod(s.heads, s.kv_heads) != 0)
    throw InvalidInput(fmt::format(
        "attention: {} query heads cannot share {} KV heads; the query heads must be a multiple",
        s.heads, s.kv_heads));
  if (f.fp8_math && (s.phase == AttentionPhase::kDecode || !device.peak(device::Precision::kFp8)))
    throw InvalidInput(
        fmt::format("fp8 attention products need fp8 units and a prefill kernel; {} {}", device.id,
                    s.phase == AttentionPhase::kDecode ? "decodes in 16 bits (the cache may be fp8)"
                                                       : "has no fp8 units in the catalog"));
}

}  // namespace

std::string_view to_string(AttentionPhase phase) {
  return phase == AttentionPhase::kDecode ? "decode" : "prefill";
}

std::string AttentionFormat::name() const {
  return fmt::format("{}/{}", fp8_math ? "fp8" : "bf16", fp8_cache ? "fp8" : "bf16");
}

double attention_pairs(const AttentionShape& s) {
  // The j-th new token (1-based) sees the c cached keys and j new ones, at most the window.
  const double cached = s.keys - s.queries;
  const double window = s.window > 0 ? s.window : INFINITY;
  const double rising = std::clamp(window - cached - 1, 0.0, s.queries);  // c + j < window
  return rising * cached + rising * (rising + 1) / 2 +
         (s.queries - rising) * std::min(window, s.keys);
}

double attention_time_s(const device::DeviceSpec& device, const AttentionShape& shape,
                        const AttentionFormat& format, const AttentionParameters& p,
                        double clock_mhz) {
  return times(device, shape, format, p, clock_mhz).total_s;
}

KernelEstimate predict_attention(const device::DeviceSpec& device, const AttentionShape& shape,
                                 const AttentionFormat& format, const KernelParameters& parameters,
                                 const std::string& engine, double clock_mhz) {
  check(device, shape, format);
  std::string from;
  const AttentionParameters p = parameters.attention_for(shape.phase, format, engine, &from);
  const double weight = format.fp8_math ? parameters.power_weight(GemmFormat::kFp8) : 1.0;
  const auto activity_at = [&](double clock) {
    const Times t = times(device, shape, format, p, clock);
    Activity a;
    a.compute = std::min(1.0, t.tensor_s / t.total_s);
    a.memory = std::min(1.0, t.bytes / t.total_s / device.memory_bandwidth_byte_per_s);
    a.format_weight = weight;
    return a;
  };
  const PoweredClock powered = run_under_power_limit(
      device, parameters.power, activity_at, clock_mhz > 0 ? clock_mhz : device.clock.boost_mhz);
  const Times t = times(device, shape, format, p, powered.clock_mhz);
  KernelEstimate e = estimate_at(powered, t.total_s);
  e.flop_count = 4 * shape.head_dim * shape.batch * shape.heads * attention_pairs(shape);
  e.byte_count = t.bytes;
  e.compute_s = t.compute_s;
  e.memory_s = t.memory_s;
  e.tile_m = static_cast<int>(shape.phase == AttentionPhase::kDecode ? kTensorRows : t.tile);
  e.tile_n = static_cast<int>(shape.phase == AttentionPhase::kDecode ? kDecodeSplitKeys : t.tile);
  e.waves = t.waves;
  const double sms = std::max(1, device.sm_count);
  e.wave_utilisation = t.ctas / (t.waves * sms);
  const double useful = attention_pairs(shape) * shape.heads * shape.batch;
  const double padded = t.padded_pairs * shape.heads * shape.batch;
  e.tile_utilisation = padded > 0 ? std::min(1.0, useful / padded) : 0;
  if (powered.capped) {
    e.bound = Bound::kPowerCap;
  } else if (p.latency_s > std::max(t.compute_s, t.memory_s)) {
    e.bound = Bound::kLatency;
  } else {
    e.bound = t.compute_s >= t.memory_s ? Bound::kCompute : Bound::kMemory;
  }
  set_uncertainty(e, parameters, attention_parameters_key(shape.phase, format));
  e.parameters = from.empty() ? fmt::format("{} {} attention kernels ({})", engine,
                                            to_string(shape.phase), format.name())
                              : from;
  return e;
}

}  // namespace nnergy::kernel
