#include "nnergy/serve/serving_run.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "nnergy/core/error.h"
#include "nnergy/core/text.h"

namespace nnergy::serve {

namespace {

// Decode contexts are sampled at this many points (decode-step cost is close to linear in the
// context, so a few points integrate it well).
constexpr int kContextSamples = 8;

// The token budget of one step: the setting, else the engine's, else a whole prompt batch.
double step_budget(const Deployment& d, const RunSettings& s) {
  if (s.max_batched_tokens) return *s.max_batched_tokens;
  if (d.engine->max_batched_tokens > 0) return d.engine->max_batched_tokens;
  return std::max<double>(d.model->max_context, s.input_tokens);
}

llm::StepShape decode_shape(double sequences, double first_context, double span, int samples) {
  llm::StepShape shape;
  for (int k = 0; k < samples; ++k) {
    llm::SequenceGroup g;
    g.count = sequences / samples;
    g.new_tokens = 1;
    g.cached = first_context + (k + 0.5) * span / samples;
    shape.groups.push_back(g);
  }
  return shape;
}

// The prefill of `prompts` prompts of `input` tokens in steps of at most `budget` tokens:
// total time and energy of the replica.
PhaseTotals prefill_steps(const Deployment& d, double prompts, double input, double budget,
                          ShareTotals* shares, double running = 0) {
  PhaseTotals total;
  if (prompts <= 0) return total;
  llm::StepShape shape;
  double steps = 1;
  if (budget >= input) {
    // Whole prompts per step.
    const double per_step = std::max(1.0, std::floor(budget / input));
    steps = std::ceil(prompts / per_step);
    shape.groups.push_back(llm::SequenceGroup{prompts / steps, input, 0, true});
  } else {
    // Each prompt in chunks of `budget`; its chunks see on average half the prompt before them.
    const double chunks = std::ceil(input / budget);
    steps = prompts * chunks;
    shape.groups.push_back(
        llm::SequenceGroup{1, input / chunks, input * (chunks - 1) / (2 * chunks), false});
  }
  const StepEstimate step = estimate_step(d, shape, false, false, running + shape.sequences());
  total.time_s = step.time_s * steps;
  total.energy_j = step.energy_j * steps;
  if (shares != nullptr) *shares += step.shares * steps;
  return total;
}

// The time from a request's admission until its whole prompt of `in` tokens has been processed
// (its first token sampled) when the engine prefills it in chunks of at most `chunk` tokens, each
// in a step beside the decode rows of `others` running sequences (contexts spread over
// in .. in + out): the full chunks at their mean cached length (attention is linear in it), the
// last partial chunk on its own; a pipeline of pp stages adds pp − 1 stage times of the last.
double prompt_time(const Deployment& d, double in, double out, double chunk, double others) {
  const auto chunk_step = [&](double tokens, double cached, bool last) {
    llm::StepShape shape;
    if (others > 0) shape = decode_shape(others, in, out, kContextSamples);
    shape.groups.push_back(llm::SequenceGroup{1, tokens, cached, last});
    return estimate_step(d, shape, false).time_s;
  };
  const double full = std::floor(in / chunk);
  const double rest = in - full * chunk;
  double time = 0, last = 0;
  if (full > 0) {
    last = chunk_step(chunk, (full - 1) / 2 * chunk, rest <= 0);
    time += full * last;
  }
  if (rest > 0) {
    last = chunk_step(rest, full * chunk, true);
    time += last;
  }
  return time + (d.sharding.pp - 1) * last;
}

}  // namespace

std::string_view to_string(Workload workload) {
  return workload == Workload::kOffline ? "offline" : "serving";
}

Workload parse_workload(std::string_view name, std::string_view setting) {
  const std::string key = ascii_lower(name);
  if (key == "serving" || key == "online" || key == "server") return Workload::kServing;
  if (key == "offline" || key == "batch") return Workload::kOffline;
  throw InvalidInput(fmt::format(
      "{} {}: expected serving (steady-state continuous batching) or offline (one batch)", setting,
      name));
}

ServeResult run(const Deployment& d, const RunSettings& s) {
  const auto flag = [&](std::string_view setting) { return setting_name(s.names, setting); };
  if (!(s.input_tokens >= 1) || !(s.output_tokens >= 1)) {
    throw InvalidInput(
        fmt::format("{} {:g} {} {:g}: expected at least 1 prompt token and 1 output token",
                    flag("input_tokens"), s.input_tokens, flag("output_tokens"), s.output_tokens));
  }
  const double total_tokens = s.input_tokens + s.output_tokens;
  if (total_tokens > static_cast<double>(d.model->max_context)) {
    throw InvalidInput(
        fmt::format("{} {:g} + {} {:g} = {:g} tokens: beyond {}'s context of {} tokens "
                    "(max_position_embeddings)",
                    flag("input_tokens"), s.input_tokens, flag("output_tokens"), s.output_tokens,
                    total_tokens, d.model->id, d.model->max_context));
  }
  if (s.batch && *s.batch < 1) {
    throw InvalidInput(fmt::format("{} {}: expected a positive number of sequences",
                                   flag(s.workload == Workload::kOffline ? "batch" : "max_batch"),
                                   *s.batch));
  }
  if (s.max_batched_tokens && *s.max_batched_tokens < 1) {
    throw InvalidInput(fmt::format("{} {}: expected a positive number of tokens",
                                   flag("max_batched_tokens"), *s.max_batched_tokens));
  }
  ServeResult r;
  const EngineProfile& engine = *d.engine;
  const int pp = d.sharding.pp;
  // The KV cache holds each running sequence's tokens so far. In a steady state of continuous
  // batching they are spread from the prompt to the prompt plus the output, so the cache holds
  // the mean, prompt + output/2, per sequence (engines allocate blocks as sequences grow); an
  // offline batch grows in lockstep to prompt + output.
  const bool staggered = s.workload == Workload::kServing && engine.continuous_batching;
  const double held_tokens = staggered ? s.input_tokens + s.output_tokens / 2 : total_tokens;
  r.largest_batch = std::floor(d.sequences_that_fit(held_tokens));
  const double scheduler_cap = engine.max_running_sequences;
  if (s.batch) {
    if (*s.batch > r.largest_batch) {
      throw InvalidInput(fmt::format(
          "{} {}: {} sequences holding {:g} tokens each{} do not fit the KV cache of {} × {} at tp "
          "{} (about {:g} fit: {:.1f} GiB per GPU for the cache after {:.1f} GiB of weights); "
          "lower the batch, raise {}, or use fp8 weights or KV cache",
          flag(s.workload == Workload::kOffline ? "batch" : "max_batch"), *s.batch, *s.batch,
          held_tokens, staggered ? " on average" : "", d.gpus_per_replica(), d.device->id,
          d.sharding.tp, r.largest_batch, d.kv_budget_bytes / 1073741824.0,
          d.memory.weights / 1073741824.0, flag("tp")));
    }
    r.batch = *s.batch;
  } else {
    r.batch = std::max(1.0, std::min(r.largest_batch, scheduler_cap));
    r.batch_is_largest = true;
    if (r.largest_batch > scheduler_cap) {
      r.notes.push_back(fmt::format(
          "batch {:g}: the {} scheduler's cap on running sequences ({:g} would fit the KV cache)",
          r.batch, engine.id, r.largest_batch));
    } else {
      r.notes.push_back(
          fmt::format("batch {:g}: the largest whose KV cache fits ({} to choose)", r.batch,
                      flag(s.workload == Workload::kOffline ? "batch" : "max_batch")));
    }
  }
  const double micro = r.batch / pp;  // sequences per pipeline micro-batch
  const double budget = step_budget(d, s);
  const double in = s.input_tokens;
  const double out = s.output_tokens;
  const bool steady = staggered;
  if (s.workload == Workload::kServing && !engine.continuous_batching) {
    r.notes.push_back(fmt::format(
        "{} batches statically: serving runs batch after batch, each from its prefill to its "
        "last token (as offline)",
        engine.id));
  }
  r.kv_cache_bytes_per_gpu =
      r.batch * llm::kv_bytes_of_sequence(*d.model, d.sharding, d.formats, held_tokens);

  double step_time = 0;  // one decode step (per stage)
  if (steady && engine.chunked_prefill) {
    // Each step: the micro-batch's decode rows, plus the prefill tokens of the requests that
    // replace the finished ones (micro/out requests per step, `in` tokens each).
    double running = micro;
    double prefill_tokens = running * in / out;
    if (running + prefill_tokens > budget) {
      running = budget / (1 + in / out);
      prefill_tokens = running * in / out;
      r.notes.push_back(fmt::format(
          "the step budget of {:g} tokens ({}) holds {:.0f} running sequences with their "
          "prompts' prefill, not {:g}",
          budget, flag("max_batched_tokens"), running * pp, r.batch));
    }
    llm::StepShape mixed = decode_shape(running, in, out, kContextSamples);
    const double chunk = std::min(in, std::max(1.0, budget - running));
    mixed.groups.push_back(
        llm::SequenceGroup{prefill_tokens / chunk, chunk, (in - chunk) / 2, false});
    const StepEstimate step = estimate_step(d, mixed, false);
    const StepEstimate decode_only =
        estimate_step(d, decode_shape(running, in, out, kContextSamples), true, s.rows);
    r.rows = decode_only.rows;
    step_time = step.time_s;
    r.decode_step_s = step.time_s * pp;
    r.time_per_output_token_s = step.time_s * pp;
    r.output_tokens_per_s = running / step.time_s * d.replicas;
    const double per_token = step.energy_j / running;
    r.energy_per_output_token_j = per_token;
    r.decode.energy_j = decode_only.energy_j / running * out;
    r.decode.time_s = decode_only.time_s * pp * out;
    r.prefill.energy_j = std::max(0.0, per_token * out - r.decode.energy_j);
    r.prefill.time_s = std::max(0.0, step.time_s - decode_only.time_s) * pp * out;
    r.shares = step.shares * (out / running);
    // TTFT: half the step in flight when the request arrives, its place behind the prompts
    // that arrive with it (running/out finish per step; those ahead wait for their prefill at
    // the budget left beside the decode rows), then its own prompt chunk by chunk.
    const double others = std::max(0.0, running - 1);  // decoding beside the new request
    const double capacity = std::max(1.0, budget - others);
    const double own_chunk = std::min(in, capacity);
    const double arrivals = running / out;
    const double ahead = std::max(0.0, arrivals - 1) / 2;
    const double prompt_s = prompt_time(d, in, out, own_chunk, others);
    const double queue_s = ahead * in / own_chunk * (prompt_s / std::ceil(in / own_chunk));
    r.ttft_s = 0.5 * step.time_s * pp + queue_s + prompt_s;
    if (ahead >= 0.5) {
      r.notes.push_back(fmt::format(
          "TTFT includes {:.1f} prompts' prefill ahead of a request on average ({:.1f} requests "
          "finish and are replaced per step at batch {:g})",
          ahead, arrivals, r.batch));
    }
    r.avg_power_w = step.energy_j / step.time_s * d.replicas;
  } else if (steady) {
    // Prefill in steps of their own: whenever requests finish (micro/out per decode step),
    // their replacements' prompts are prefilled before decoding resumes.
    const StepEstimate decode_step =
        estimate_step(d, decode_shape(micro, in, out, kContextSamples), true, s.rows);
    r.rows = decode_step.rows;
    const double finishing = micro / out;  // requests per decode step
    const double prefill_steps_per_decode = std::min(1.0, finishing);
    ShareTotals prefill_shares;
    const PhaseTotals p =
        prefill_steps(d, finishing / prefill_steps_per_decode, in, budget, &prefill_shares, micro);
    const double cycle = decode_step.time_s + prefill_steps_per_decode * p.time_s;
    const double cycle_energy = decode_step.energy_j + prefill_steps_per_decode * p.energy_j;
    step_time = decode_step.time_s;
    r.decode_step_s = decode_step.time_s * pp;
    r.time_per_output_token_s = cycle * pp;
    r.output_tokens_per_s = micro / cycle * d.replicas;
    r.energy_per_output_token_j = cycle_energy / micro;
    r.decode.energy_j = decode_step.energy_j / micro * out;
    r.decode.time_s = decode_step.time_s * pp * out;
    r.prefill.energy_j = prefill_steps_per_decode * p.energy_j / micro * out;
    r.prefill.time_s = prefill_steps_per_decode * p.time_s * pp * out;
    r.shares = (decode_step.shares + prefill_shares * prefill_steps_per_decode) * (out / micro);
    // TTFT: half the decode step in flight, then the prefill step(s) that hold the prompt.
    r.ttft_s = (0.5 * decode_step.time_s + p.time_s) * pp;
    r.avg_power_w = cycle_energy / cycle * d.replicas;
  } else {
    // Offline: the batch's prompts, then `out` decode steps with every sequence's context
    // growing from `in`; the decode cost is integrated over sampled contexts.
    ShareTotals prefill_shares;
    const PhaseTotals p = prefill_steps(d, micro, in, budget, &prefill_shares);
    const int samples = static_cast<int>(std::min<double>(kContextSamples, out));
    PhaseTotals decode;
    ShareTotals decode_shares;
    for (int k = 0; k < samples; ++k) {
      llm::StepShape shape;
      shape.groups.push_back(llm::SequenceGroup{micro, 1, in + (k + 0.5) * out / samples, true});
      const StepEstimate step = estimate_step(d, shape, true, s.rows && k == samples / 2);
      if (s.rows && k == samples / 2) r.rows = step.rows;
      decode.time_s += step.time_s * out / samples;
      decode.energy_j += step.energy_j * out / samples;
      decode_shares += step.shares * (out / samples);
    }
    // A pipeline of pp stages runs pp micro-batches at once.
    const double total_time = (p.time_s + decode.time_s) * pp;
    const double total_energy = (p.energy_j + decode.energy_j) * pp;
    step_time = decode.time_s / out;
    r.ttft_s = p.time_s * pp;
    r.time_per_output_token_s = decode.time_s / out * pp;
    r.decode_step_s = r.time_per_output_token_s;
    r.output_tokens_per_s = r.batch * out / total_time * d.replicas;
    r.energy_per_output_token_j = total_energy / (r.batch * out);
    r.prefill.time_s = p.time_s * pp;
    r.prefill.energy_j = p.energy_j * pp / r.batch;
    r.decode.time_s = decode.time_s * pp;
    r.decode.energy_j = decode.energy_j * pp / r.batch;
    r.shares = (prefill_shares + decode_shares) * (static_cast<double>(pp) / r.batch);
    r.avg_power_w = total_energy / total_time * d.replicas;
  }
  (void)step_time;
  r.energy_per_request_j = r.energy_per_output_token_j * out;
  r.request_latency_s = r.ttft_s + out * r.time_per_output_token_s;
  r.output_tokens_per_s_per_gpu = r.output_tokens_per_s / d.gpus;
  r.avg_power_per_gpu_w = r.avg_power_w / d.gpus;
  return r;
}

Deployment settle_for_throughput(const DeploymentRequest& request, const RunSettings& settings) {
  if (!request.gpus || request.tp) return settle(request);
  const Deployment smallest = settle(request);  // refuses what no size can run
  const int pp = request.pp.value_or(1);
  const int per_pipeline = *request.gpus / pp;
  struct Tried {
    int tp = 0;
    double tokens_per_s = 0;
  };
  std::vector<Tried> tried;
  std::optional<Deployment> best;
  double best_rate = -1;
  for (int tp = smallest.sharding.tp; tp <= per_pipeline; tp *= 2) {
    if (per_pipeline % tp != 0) continue;
    DeploymentRequest r = request;
    r.tp = tp;
    try {
      Deployment d = settle(r);
      const double rate = run(d, settings).output_tokens_per_s;
      tried.push_back({tp, rate});
      if (rate > best_rate) {
        best_rate = rate;
        best = std::move(d);
      }
    } catch (const InvalidInput&) {
      // A size whose heads, experts or memory do not allow it: not a candidate.
    }
  }
  if (!best) return smallest;
  std::string others;
  for (const Tried& t : tried) {
    others += fmt::format("{}tp {} × {} replica{}: {:.0f} tokens/s", others.empty() ? "" : ", ",
                          t.tp, *request.gpus / (t.tp * pp),
                          *request.gpus / (t.tp * pp) > 1 ? "s" : "", t.tokens_per_s);
  }
  best->notes.push_back(fmt::format(
      "tensor parallel {} chosen: the most output tokens/s of the sizes that fit {} GPUs ({}; {} "
      "to choose)",
      best->sharding.tp, *request.gpus, others, setting_name(request.names, "tp")));
  return *best;
}

}  // namespace nnergy::serve
