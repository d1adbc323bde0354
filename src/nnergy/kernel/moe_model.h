#pragma once

// Time, board power and energy of one fused MoE layer (the routed experts of a mixture-of-
// experts MLP) on one GPU: the tokens' top-k choices spread over the experts this GPU holds,
// each active expert's up (gate and up for a gated MLP) and down projections as two grouped
// GEMMs over those experts (kernel/gemm_model.h: every expert's rows padded to its tiles, the
// tiles of all experts in waves over the SMs, every active expert's weights read once), and the
// tokens permuted to their experts and gathered back:
//
//   t = t_grouped(up) + t_grouped(down) + bytes moved by the permutation / (η_m·bandwidth)
//
// with the fused-MoE parameters (KernelParameters::moe) fitted on measured MoE layers.
// Routing: "balanced" spreads the T·k choices evenly; a power law (exponent α) gives expert i
// a share ∝ i^−α (at most one choice per token and expert), and this GPU holds the most-chosen
// experts (the rank every other waits for).

#include <string>
#include <vector>

#include "nnergy/kernel/gemm_model.h"

namespace nnergy::kernel {

struct MoeShape {
  double tokens = 0;           ///< T: tokens entering the layer
  double hidden = 0;           ///< H: the model's hidden size
  double inter = 0;            ///< I: one expert's intermediate size, before tensor parallelism
  double topk = 1;             ///< k: experts each token chooses
  double experts = 1;          ///< E: routed experts of the layer
  double ep = 1;               ///< expert parallelism: this GPU holds E/ep experts
  double tp = 1;               ///< tensor parallelism inside each expert: I/tp columns here
  double power_law_alpha = 0;  ///< 0: balanced routing; > 0: power-law exponent α
  bool gated = true;           ///< gate and up projections (SwiGLU: 2·I/tp columns)
};

/// The rows of this GPU's active experts: groups of experts with the same token count.
std::vector<GemmGroup> expert_loads(const MoeShape& shape);

/// The MoE layer's time alone (no power, no cap) with explicit parameters: what the fit
/// evaluates.
double moe_time_s(const device::DeviceSpec& device, const MoeShape& shape, GemmFormat format,
                  const GemmParameters& p, double clock_mhz);

/// Predicts the layer in `format` with `engine`'s fused-MoE kernels on `device` at `clock_mhz`
/// (the boost clock when 0). Throws InvalidInput as predict_gemm does, and for experts that
/// `ep` does not divide or a top-k above the experts.
KernelEstimate predict_moe(const device::DeviceSpec& device, const MoeShape& shape,
                           GemmFormat format, const KernelParameters& parameters,
                           const std::string& engine = KernelParameters::kDefaultEngine,
                           double clock_mhz = 0);

/// The name the MoE scores and ± go by: "moe bf16".
std::string moe_parameters_key(GemmFormat format);

}  // namespace nnergy::kernel
