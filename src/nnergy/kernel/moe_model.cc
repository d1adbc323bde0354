#include "nnergy/kernel/moe_model.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "nnergy/core/error.h"
#include "nnergy/kernel/kernel_power.h"

namespace nnergy::kernel {

namespace {

// Bytes per element of the 16-bit activations the permutation moves.
constexpr double kActivationBytes = 2;
// Below this fraction of the boost clock the SMs cannot keep DRAM saturated (as the GEMMs').
constexpr double kMemorySaturationClockRatio = 0.5;

struct MoeTimes {
  GroupedGemmTime up;
  GroupedGemmTime down;
  double permute_s = 0;
  double permute_bytes = 0;
  double total_s = 0;
  double rows = 0;
};

// Each routed row is read into its expert's order and its output gathered back and summed
// into the token: the rows' hidden vectors twice, the tokens' once.
MoeTimes times(const device::DeviceSpec& device, const MoeShape& s, GemmFormat format,
               const GemmParameters& p, double clock_mhz) {
  const std::vector<GemmGroup> loads = expert_loads(s);
  MoeTimes t;
  for (const GemmGroup& g : loads) t.rows += g.m * g.count;
  const double inter = s.inter / s.tp;
  t.up =
      grouped_gemm_time(device, loads, (s.gated ? 2 : 1) * inter, s.hidden, format, p, clock_mhz);
  t.down = grouped_gemm_time(device, loads, s.hidden, inter, format, p, clock_mhz);
  const double clock_ratio = clock_mhz / device.clock.boost_mhz;
  const double bandwidth = p.memory_efficiency * device.memory_bandwidth_byte_per_s *
                           std::min(1.0, clock_ratio / kMemorySaturationClockRatio);
  t.permute_bytes = (2 * t.rows + s.tokens) * s.hidden * kActivationBytes;
  t.permute_s = t.permute_bytes / bandwidth;
  t.total_s = t.up.total_s + t.down.total_s + t.permute_s;
  return t;
}

void check(const MoeShape& s) {
  for (const auto& [name, value] :
       {std::pair{"tokens", s.tokens}, std::pair{"hidden", s.hidden}, std::pair{"inter", s.inter},
        std::pair{"topk", s.topk}, std::pair{"experts", s.experts}, std::pair{"ep", s.ep},
        std::pair{"tp", s.tp}}) {
    if (!(value >= 1) || !std::isfinite(value) || value != std::floor(value))
      throw InvalidInput(
          fmt::format("MoE {} must be a positive whole number, got {}", name, value));
  }
  if (s.topk > s.experts)
    throw InvalidInput(fmt::format("MoE topk {} exceeds the {} experts", s.topk, s.experts));
  if (std::fmod(s.experts, s.ep) != 0)
    throw InvalidInput(fmt::format(
        "MoE ep {} must divide the {} experts (each GPU holds experts/ep)", s.ep, s.experts));
  if (std::fmod(s.inter, s.tp) != 0)
    throw InvalidInput(
        fmt::format("MoE tp {} must divide the intermediate size {}", s.tp, s.inter));
  if (!(s.power_law_alpha >= 0) || !std::isfinite(s.power_law_alpha))
    throw InvalidInput(fmt::format(
        "MoE power-law exponent must be 0 (balanced) or positive, got {}", s.power_law_alpha));
}

}  // namespace

std::string moe_parameters_key(GemmFormat format) {
  return fmt::format("moe {}", info(format).name);
}

std::vector<GemmGroup> expert_loads(const MoeShape& s) {
  const double local = s.experts / s.ep;
  const double choices = s.tokens * s.topk;
  if (s.power_law_alpha <= 0) {
    // Balanced: the choices spread evenly; fewer choices than experts leave experts idle.
    const double mine = choices / s.ep;
    if (mine >= local) return {{mine / local, local}};
    return {{1, std::max(1.0, std::round(mine))}};
  }
  // Power law: expert i (from 1) gets a share ∝ i^−α of the choices, at most one per token:
  // the experts a share would overfill take every token, the rest share what is left.
  const auto n = static_cast<std::size_t>(s.experts);
  std::vector<double> share(n);
  for (std::size_t i = 0; i < n; ++i)
    share[i] = std::pow(static_cast<double>(i + 1), -s.power_law_alpha);
  std::vector<double> load(n, 0);
  std::vector<bool> full(n, false);
  double remaining = choices;
  for (std::size_t round = 0; round < n; ++round) {
    double free_share = 0;
    for (std::size_t i = 0; i < n; ++i)
      if (!full[i]) free_share += share[i];
    bool filled = false;
    for (std::size_t i = 0; i < n; ++i) {
      if (full[i]) continue;
      load[i] = remaining * share[i] / free_share;
      if (load[i] >= s.tokens) filled = true;
    }
    if (!filled) break;
    for (std::size_t i = 0; i < n; ++i) {
      if (!full[i] && load[i] >= s.tokens) {
        load[i] = s.tokens;
        full[i] = true;
        remaining -= s.tokens;
      }
    }
  }
  std::vector<GemmGroup> groups;
  const auto held = static_cast<std::size_t>(local);
  for (std::size_t i = 0; i < held; ++i) {
    const double rows = std::round(load[i]);
    if (rows < 1) continue;
    if (!groups.empty() && groups.back().m == rows) {
      groups.back().count += 1;
    } else {
      groups.push_back({rows, 1});
    }
  }
  if (groups.empty()) groups.push_back({1, 1});
  return groups;
}

double moe_time_s(const device::DeviceSpec& device, const MoeShape& shape, GemmFormat format,
                  const GemmParameters& p, double clock_mhz) {
  return times(device, shape, format, p, clock_mhz).total_s;
}

KernelEstimate predict_moe(const device::DeviceSpec& device, const MoeShape& shape,
                           GemmFormat format, const KernelParameters& parameters,
                           const std::string& engine, double clock_mhz) {
  const GemmFormatInfo& f = info(format);
  check_units(device, format, "MoE layers");
  check(shape);
  const double clock = clock_mhz > 0 ? clock_mhz : device.clock.boost_mhz;
  std::string from;
  const GemmParameters p = parameters.moe_for(format, engine, &from);
  const double weight = parameters.power_weight(format);
  const auto activity = [&](const MoeTimes& t) {
    Activity a;
    a.compute = std::min(1.0, (t.up.compute_s + t.down.compute_s) / t.total_s);
    a.memory = std::min(1.0, (t.up.byte_count + t.down.byte_count + t.permute_bytes) / t.total_s /
                                 device.memory_bandwidth_byte_per_s);
    a.format_weight = weight;
    return a;
  };
  const PoweredClock powered = run_under_power_limit(
      device, parameters.power,
      [&](double at) { return activity(times(device, shape, format, p, at)); }, clock);
  const MoeTimes t = times(device, shape, format, p, powered.clock_mhz);
  KernelEstimate e = estimate_at(powered, t.total_s);
  const double inter = shape.inter / shape.tp;
  e.flop_count = 2 * t.rows * shape.hidden * inter * ((shape.gated ? 2 : 1) + 1);
  e.byte_count = t.up.byte_count + t.down.byte_count + t.permute_bytes;
  e.compute_s = t.up.compute_s + t.down.compute_s;
  e.memory_s = t.up.memory_s + t.down.memory_s + t.permute_s;
  e.waves = t.up.waves + t.down.waves;
  const double fixed = 2 * p.latency_s;
  if (powered.capped) {
    e.bound = Bound::kPowerCap;
  } else if (fixed > std::max(e.compute_s, e.memory_s)) {
    e.bound = Bound::kLatency;
  } else {
    e.bound = e.compute_s >= e.memory_s ? Bound::kCompute : Bound::kMemory;
  }
  set_uncertainty(e, parameters, moe_parameters_key(format));
  e.parameters = from.empty() ? fmt::format("{} {} MoE kernels ({})", engine, f.name,
                                            p.fitted_on.empty() ? "built-in defaults" : p.fitted_on)
                              : from;
  return e;
}

}  // namespace nnergy::kernel
