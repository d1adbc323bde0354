#include "nnergy/kernel/gemm_model.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <span>

#include "nnergy/core/error.h"
#include "nnergy/kernel/kernel_power.h"

namespace nnergy::kernel {

namespace {

struct Tile {
  int m;
  int n;
};
// The CTA tiles GEMM libraries choose among (CUTLASS/cuBLAS on Ampere to Blackwell).
constexpr std::array<Tile, 6> kTiles = {
    {{256, 128}, {128, 256}, {128, 128}, {128, 64}, {64, 128}, {64, 64}}};
constexpr double kLargestTileArea = 256.0 * 128.0;
// Split-K: a reduction is split across SMs only while each part keeps at least this depth.
constexpr double kMinSplitDepth = 256;
// Below this fraction of the boost clock the SMs cannot keep DRAM saturated.
constexpr double kMemorySaturationClockRatio = 0.5;

struct Times {
  double compute_s = 0;
  double memory_s = 0;
  double quantize_s = 0;
  double total_s = 0;
  double bytes = 0;  // DRAM bytes, each operand once
  Tile tile{0, 0};
  double waves = 0;
  double tiles = 0;
  double split = 1;
};

// The products of `groups` (each `count` products of m × k by k × n), their tiles scheduled
// together in waves over the SMs.
Times times(const device::DeviceSpec& device, std::span<const GemmGroup> groups, double n, double k,
            GemmFormat format, const GemmParameters& p, double clock_mhz) {
  const GemmFormatInfo& f = info(format);
  const double peak = device.peak(units(device, format)).value_or(0);
  const double clock_ratio = clock_mhz / device.clock.boost_mhz;
  const double sms = std::max(1, device.sm_count);
  Times t;
  t.compute_s = INFINITY;
  double rows = 0;
  double products = 0;
  for (const GemmGroup& g : groups) {
    rows += g.m * g.count;
    products += g.count;
  }
  for (const Tile& tile : kTiles) {
    double tiles = 0;
    for (const GemmGroup& g : groups) tiles += std::ceil(g.m / tile.m) * g.count;
    tiles *= std::ceil(n / tile.n);
    const double split =
        tiles >= sms
            ? 1.0
            : std::max(1.0, std::min(std::floor(sms / tiles), std::floor(k / kMinSplitDepth)));
    const double depth = k / split;
    const double waves = std::ceil(tiles * split / sms);
    const double area = static_cast<double>(tile.m) * tile.n;
    const double sm_rate = p.compute_efficiency *
                           std::pow(area / kLargestTileArea, p.tile_exponent) * peak / sms *
                           clock_ratio;
    const double compute_s = waves * 2 * area * depth / sm_rate * (depth + p.k_half) / depth;
    if (compute_s < t.compute_s) {
      t.compute_s = compute_s;
      t.tile = tile;
      t.waves = waves;
      t.tiles = tiles;
      t.split = split;
    }
  }
  const double bandwidth = p.memory_efficiency * device.memory_bandwidth_byte_per_s *
                           std::min(1.0, clock_ratio / kMemorySaturationClockRatio);
  t.bytes =
      rows * k * f.input_bytes + products * k * n * f.weight_bytes + rows * n * f.output_bytes;
  t.memory_s = t.bytes / bandwidth;
  if (f.quantizes_input)
    t.quantize_s = p.quantize_latency_s + rows * k * (2 + f.input_bytes) / bandwidth;
  t.total_s = p.latency_s + std::max(t.compute_s, t.memory_s) +
              p.overlap_loss * std::min(t.compute_s, t.memory_s) + t.quantize_s;
  return t;
}

Times times(const device::DeviceSpec& device, const GemmShape& s, GemmFormat format,
            const GemmParameters& p, double clock_mhz) {
  const GemmGroup group{s.m, std::max(1.0, s.batch)};
  return times(device, std::span<const GemmGroup>(&group, 1), s.n, s.k, format, p, clock_mhz);
}

double dram_bytes(const GemmShape& s, GemmFormat format) {
  const GemmFormatInfo& f = info(format);
  return std::max(1.0, s.batch) *
         (s.m * s.k * f.input_bytes + s.k * s.n * f.weight_bytes + s.m * s.n * f.output_bytes);
}

Activity activity_of(const device::DeviceSpec& device, const GemmShape& s, GemmFormat format,
                     const Times& t, double weight) {
  Activity a;
  a.compute = std::min(1.0, t.compute_s / t.total_s);
  a.memory = std::min(1.0, dram_bytes(s, format) / t.total_s / device.memory_bandwidth_byte_per_s);
  a.format_weight = weight;
  return a;
}

}  // namespace

std::string_view to_string(Bound bound) {
  switch (bound) {
    case Bound::kCompute:
      return "compute";
    case Bound::kMemory:
      return "memory";
    case Bound::kPowerCap:
      return "power cap";
    case Bound::kLink:
      return "link";
    case Bound::kLatency:
      break;
  }
  return "latency";
}

device::Precision units(const device::DeviceSpec& device, GemmFormat format) {
  const device::Precision math = info(format).math;
  if (math == device::Precision::kBf16 && !device.peak(math)) return device::Precision::kFp16;
  return math;
}

std::string formats_of(const device::DeviceSpec& device) {
  std::string out;
  for (const GemmFormat* f = all_gemm_formats_begin(); f != all_gemm_formats_end(); ++f)
    if (device.peak(units(device, *f)))
      out += (out.empty() ? "" : ", ") + std::string(info(*f).name);
  return out;
}

double gemm_time_s(const device::DeviceSpec& device, const GemmShape& shape, GemmFormat format,
                   const GemmParameters& p, double clock_mhz) {
  return times(device, shape, format, p, clock_mhz).total_s;
}

GroupedGemmTime grouped_gemm_time(const device::DeviceSpec& device,
                                  std::span<const GemmGroup> groups, double n, double k,
                                  GemmFormat format, const GemmParameters& p, double clock_mhz) {
  const Times t = times(device, groups, n, k, format, p, clock_mhz);
  return {t.total_s, t.compute_s, t.memory_s, t.bytes, t.waves};
}

KernelEstimate estimate_at(const PoweredClock& powered, double time_s) {
  KernelEstimate e;
  e.clock_mhz = powered.clock_mhz;
  e.time_s = time_s;
  e.power_w = powered.power_w;
  e.compute_power_w = powered.compute_power_w;
  e.energy_j = powered.power_w * time_s;
  return e;
}

void set_uncertainty(KernelEstimate& e, const KernelParameters& parameters,
                     const std::string& time_key) {
  const auto sigma = parameters.time_log_sigma.find(time_key);
  if (sigma != parameters.time_log_sigma.end())
    e.time_std_s = device::relative_spread(sigma->second) * e.time_s;
  e.power_std_w = device::relative_spread(parameters.power_log_sigma) * e.power_w;
  const double rel_t = e.time_s > 0 ? e.time_std_s / e.time_s : 0;
  const double rel_p = e.power_w > 0 ? e.power_std_w / e.power_w : 0;
  e.energy_std_j = std::hypot(rel_t, rel_p) * e.energy_j;
}

void check_units(const device::DeviceSpec& device, GemmFormat format, std::string_view kernels) {
  const GemmFormatInfo& f = info(format);
  if (!device.peak(units(device, format))) {
    throw InvalidInput(
        fmt::format("{} has no {} units in the catalog, so it cannot run {} {}; it runs: {}",
                    device.id, device::to_string(f.math), f.name, kernels, formats_of(device)));
  }
}

KernelEstimate predict_gemm(const device::DeviceSpec& device, const GemmShape& shape,
                            GemmFormat format, const KernelParameters& parameters,
                            const std::string& engine, double clock_mhz) {
  const GemmFormatInfo& f = info(format);
  check_units(device, format, "GEMMs");
  for (const auto& [name, value] : {std::pair{"m", shape.m}, std::pair{"n", shape.n},
                                    std::pair{"k", shape.k}, std::pair{"batch", shape.batch}}) {
    if (!(value >= 1) || !std::isfinite(value))
      throw InvalidInput(
          fmt::format("GEMM {} must be a positive whole number, got {}", name, value));
  }
  const double clock = clock_mhz > 0 ? clock_mhz : device.clock.boost_mhz;
  std::string from;
  const GemmParameters p = parameters.gemm_for(format, engine, &from);
  const PowerParameters& pp = parameters.power;
  const double weight = parameters.power_weight(format);

  const PoweredClock powered = run_under_power_limit(
      device, pp,
      [&](double at) {
        return activity_of(device, shape, format, times(device, shape, format, p, at), weight);
      },
      clock);
  const Times t = times(device, shape, format, p, powered.clock_mhz);
  KernelEstimate e = estimate_at(powered, t.total_s);
  e.flop_count = 2 * shape.m * shape.n * shape.k * std::max(1.0, shape.batch);
  e.byte_count = dram_bytes(shape, format);
  e.compute_s = t.compute_s;
  e.memory_s = t.memory_s;
  e.tile_m = t.tile.m;
  e.tile_n = t.tile.n;
  e.waves = t.waves;
  const double sms = std::max(1, device.sm_count);
  e.tile_utilisation = shape.m * shape.n * std::max(1.0, shape.batch) /
                       (t.tiles * t.tile.m * static_cast<double>(t.tile.n));
  e.wave_utilisation = t.tiles * t.split / (t.waves * sms);
  if (powered.capped) {
    e.bound = Bound::kPowerCap;
  } else if (p.latency_s > std::max(t.compute_s, t.memory_s)) {
    e.bound = Bound::kLatency;
  } else {
    e.bound = t.compute_s >= t.memory_s ? Bound::kCompute : Bound::kMemory;
  }
  set_uncertainty(e, parameters, std::string(f.name));
  e.parameters = from.empty() ? fmt::format("{} {} kernels", engine, f.name) : from;
  return e;
}

}  // namespace nnergy::kernel
