#pragma once

// The workload of a deployment and its totals: an offline batch (every request starts at once:
// prefill, then the decode steps, the KV cache growing each step) or steady-state serving
// (continuous batching: the running batch stays full, finished requests replaced by new ones
// whose prompts are prefilled in chunks mixed into the decode steps, or in steps of their own
// for engines without chunked prefill).

#include <optional>
#include <string>
#include <vector>

#include "nnergy/serve/deployment.h"
#include "nnergy/serve/step_estimate.h"

namespace nnergy::serve {

enum class Workload {
  kServing,  ///< steady state of continuous batching at the running batch
  kOffline,  ///< one batch from its prefill to its last token
};
/// "serving", "offline".
std::string_view to_string(Workload workload);
/// Parses the names above; throws InvalidInput naming `setting` otherwise.
Workload parse_workload(std::string_view name, std::string_view setting);

struct RunSettings {
  Workload workload = Workload::kServing;
  double input_tokens = 0;   ///< prompt tokens per request
  double output_tokens = 0;  ///< generated tokens per request
  /// Running sequences per replica (serving) or the batch (offline); unset: the largest that
  /// fits, capped by the engine's scheduler.
  std::optional<int> batch;
  std::optional<int> max_batched_tokens;  ///< default: the engine's
  bool rows = false;                      ///< per-operation rows of a representative step
  SettingNames names = SettingNames::kFlag;
};

/// Time and energy of one phase, per replica.
struct PhaseTotals {
  double time_s = 0;
  double energy_j = 0;  ///< all GPUs of the replica
};

/// Predicted serving figures of a deployment (all replicas where it says "deployment").
struct ServeResult {
  double batch = 0;               ///< running sequences (or the batch) per replica
  bool batch_is_largest = false;  ///< the batch was chosen as the largest that fits
  double largest_batch = 0;       ///< sequences of input + output tokens that fit per replica
  /// Time to first token: from a request's arrival until its whole prompt has been processed
  /// under the engine's schedule (chunks beside the running decode rows, or prefill steps of
  /// their own), with the step in flight and, in steady state, the prompts that arrive with it.
  double ttft_s = 0;
  double time_per_output_token_s = 0;  ///< inter-token latency seen by one request
  /// One decode step (iteration) alone, without the prefill steps that stall decoding in
  /// engines without chunked prefill: what "per-iteration" TPOT measurements time.
  double decode_step_s = 0;
  double request_latency_s = 0;    ///< ttft + output tokens × ITL
  double output_tokens_per_s = 0;  ///< the whole deployment
  double output_tokens_per_s_per_gpu = 0;
  double energy_per_output_token_j = 0;
  double energy_per_request_j = 0;
  double avg_power_w = 0;  ///< all GPUs (GPU scope)
  double avg_power_per_gpu_w = 0;
  PhaseTotals prefill;  ///< per request's share: the prefill work of one request
  PhaseTotals decode;   ///< per request's share: its decode work
  ShareTotals shares;   ///< per request: time on one GPU's timeline, energy of all its GPUs
  double kv_cache_bytes_per_gpu = 0;  ///< at the batch, the longest sequences
  std::vector<OpRow> rows;            ///< a representative decode step, when asked
  std::vector<std::string> notes;
};

/// Settles `request` (settle()); when it gives a GPU count but no tensor-parallel size, the
/// size is chosen as a deployer tunes it: every size settle() could take (powers of two that
/// divide the attention heads and the GPUs of a pipeline, multiples of --ep, holding the weights
/// and one sequence) is run with `settings`, and the one with the most output tokens/s of the
/// whole deployment (its replicas together) is kept, a note saying so with the others' figures.
/// The smallest that fits can leave almost no memory for the KV cache (DeepSeek-R1 in fp8 on
/// B200s at TP 4: 33 sequences). Throws as settle() and run() when no size runs.
Deployment settle_for_throughput(const DeploymentRequest& request, const RunSettings& settings);

/// Predicts `settings` on `deployment`. Throws InvalidInput (naming the settings as
/// settings.names spells them) for non-positive token counts, a prompt and output beyond the
/// model's context, or a batch that does not fit (with the largest that does).
ServeResult run(const Deployment& deployment, const RunSettings& settings);

}  // namespace nnergy::serve
