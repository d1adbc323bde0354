#pragma once

// Time, power and energy of one step of a deployment: the analytical model (roofline time,
// archline energy, calibrated efficiencies) for every operation of llm::step_work, the
// collective model for tensor/expert/pipeline traffic, and the engine's host time.

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "nnergy/llm/step_work.h"
#include "nnergy/serve/deployment.h"

namespace nnergy::serve {

/// The parts results are split by: llm::Part plus the time GPUs wait for the host.
enum class Share { kEmbedding, kAttention, kMlp, kMixer, kLmHead, kCommunication, kHostIdle };
inline constexpr std::size_t kShareCount = 7;
/// "embedding", "attention", "mlp", "mixer", "lm_head", "communication", "host_idle".
std::string_view to_string(Share share);

/// Time (of one GPU's timeline) and energy (all GPUs of one replica) by share.
struct ShareTotals {
  std::array<double, kShareCount> time_s{};
  std::array<double, kShareCount> energy_j{};
  ShareTotals& operator+=(const ShareTotals& other);
  ShareTotals operator*(double factor) const;
  ShareTotals operator+(const ShareTotals& other) const;
};

/// One operation's prediction in a step (per occurrence, one GPU), for per-layer rows.
struct OpRow {
  std::string name;
  llm::Part part = llm::Part::kAttention;
  double count = 0;  ///< occurrences per step on one GPU
  double time_s = 0;
  double energy_j = 0;
  double power_w = 0;
  double flop_count = 0;
  double byte_count = 0;
  bool compute_bound = false;
};

/// One step of one replica.
struct StepEstimate {
  double time_s = 0;       ///< wall time of the step (one pipeline stage's, per micro-batch)
  double gpu_time_s = 0;   ///< the GPU busy (kernels and collectives)
  double host_time_s = 0;  ///< the engine's CPU time for the step
  bool cuda_graph = false;
  double kernel_count = 0;  ///< kernels per GPU
  double energy_j = 0;      ///< all GPUs of the replica
  double flop_count = 0;    ///< per GPU
  double byte_count = 0;    ///< per GPU (DRAM, lower bound)
  ShareTotals shares;
  std::vector<OpRow> rows;  ///< filled when asked (per-layer output)
};

/// Predicts `shape` on `deployment` at its operating point. `decode_only` says whether the
/// step is a pure decode step (for engines that capture only those as CUDA graphs); `rows`
/// asks for the per-operation rows; `scheduled` is the running sequences the engine's
/// scheduler goes through in this step (its host time per sequence), default the step's own:
/// a prefill step of an engine without chunked prefill still schedules every running one.
StepEstimate estimate_step(const Deployment& deployment, const llm::StepShape& shape,
                           bool decode_only, bool rows = false,
                           std::optional<double> scheduled = std::nullopt);

}  // namespace nnergy::serve
