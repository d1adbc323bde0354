#include "nnergy/serve/step_estimate.h"

#include <algorithm>

#include "nnergy/analytical/collective_model.h"
#include "nnergy/analytical/pass_model.h"

namespace nnergy::serve {

namespace {

Share share_of(llm::Part part) {
  switch (part) {
    case llm::Part::kEmbedding:
      return Share::kEmbedding;
    case llm::Part::kAttention:
      return Share::kAttention;
    case llm::Part::kMlp:
      return Share::kMlp;
    case llm::Part::kMixer:
      return Share::kMixer;
    case llm::Part::kLmHead:
      return Share::kLmHead;
    case llm::Part::kCommunication:
      return Share::kCommunication;
  }
  return Share::kAttention;
}

analytical::CollectiveOp collective_op(llm::CollectiveKind kind) {
  switch (kind) {
    case llm::CollectiveKind::kAllReduce:
      return analytical::CollectiveOp::kAllReduce;
    case llm::CollectiveKind::kAllToAll:
      return analytical::CollectiveOp::kAllToAll;
    case llm::CollectiveKind::kAllGather:
      return analytical::CollectiveOp::kAllGather;
    case llm::CollectiveKind::kSendReceive:
      return analytical::CollectiveOp::kSendReceive;
  }
  return analytical::CollectiveOp::kAllReduce;
}

std::size_t at(Share s) { return static_cast<std::size_t>(s); }

struct OpTimeEnergy {
  double time_s = 0;
  double energy_j = 0;
  bool compute_bound = false;
};

// One occurrence of `op` on one GPU: a matrix product or prefill attention by the kernel model
// (its engine's kernels at the deployment's clock) when the deployment has its parameters,
// anything else by the analytical model at the op's units.
// A kernel-model estimate with the serving fit's power scales applied.
OpTimeEnergy scaled(const Deployment& d, const kernel::KernelEstimate& k) {
  const double idle = d.device->idle_w;
  const double other = k.power_w - idle - k.compute_power_w;
  const double power = std::min(d.device->tdp_w, idle + k.compute_power_w * d.kernel_power.tensor +
                                                     other * d.kernel_power.other);
  return {k.time_s, power * k.time_s,
          k.bound == kernel::Bound::kCompute || k.bound == kernel::Bound::kPowerCap};
}

OpTimeEnergy predict(const Deployment& d, const llm::StepOp& op, const graph::OpCost& cost,
                     device::OperatingPoint point) {
  if (op.gemm && d.kernels != nullptr) {
    return scaled(d, kernel::predict_gemm(*d.device, *op.gemm, op.gemm_format, *d.kernels,
                                          d.engine->id, point.clock_mhz));
  }
  if (!op.attention.empty() && d.kernels != nullptr) {
    OpTimeEnergy sum;
    for (kernel::AttentionShape shape : op.attention) {
      // A schedule's average step may hold a fraction of a sequence of a kind (a prefill chunk
      // every few steps): that share of one sequence's kernel.
      const double share = std::min(1.0, shape.batch);
      shape.batch = std::max(1.0, shape.batch);
      const OpTimeEnergy one =
          scaled(d, kernel::predict_attention(*d.device, shape, op.attention_format, *d.kernels,
                                              d.engine->id, point.clock_mhz));
      sum.time_s += share * one.time_s;
      sum.energy_j += share * one.energy_j;
      sum.compute_bound = sum.compute_bound || one.compute_bound;
    }
    return sum;
  }
  point.precision = op.math;
  const analytical::OpEstimate one =
      analytical::predict_op(*d.device, cost, graph::Mode::kInference, point);
  return {one.time_s, one.energy_j, one.compute_bound};
}

}  // namespace

std::string_view to_string(Share share) {
  switch (share) {
    case Share::kEmbedding:
      return "embedding";
    case Share::kAttention:
      return "attention";
    case Share::kMlp:
      return "mlp";
    case Share::kMixer:
      return "mixer";
    case Share::kLmHead:
      return "lm_head";
    case Share::kCommunication:
      return "communication";
    case Share::kHostIdle:
      return "host_idle";
  }
  return "attention";
}

ShareTotals& ShareTotals::operator+=(const ShareTotals& other) {
  for (std::size_t i = 0; i < kShareCount; ++i) {
    time_s[i] += other.time_s[i];
    energy_j[i] += other.energy_j[i];
  }
  return *this;
}

ShareTotals ShareTotals::operator+(const ShareTotals& other) const {
  ShareTotals out = *this;
  out += other;
  return out;
}

ShareTotals ShareTotals::operator*(double factor) const {
  ShareTotals out = *this;
  for (std::size_t i = 0; i < kShareCount; ++i) {
    out.time_s[i] *= factor;
    out.energy_j[i] *= factor;
  }
  return out;
}

StepEstimate estimate_step(const Deployment& d, const llm::StepShape& shape, bool decode_only,
                           bool rows, std::optional<double> scheduled) {
  StepEstimate e;
  const llm::StepWork work = llm::step_work(*d.model, shape, d.sharding, d.formats);
  const EngineProfile& engine = *d.engine;
  const double gpus = d.gpus_per_replica();
  const double tokens = shape.tokens();
  e.cuda_graph = tokens <= engine.cuda_graph_max_tokens &&
                 (engine.cuda_graphs == CudaGraphs::kAll ||
                  (engine.cuda_graphs == CudaGraphs::kDecode && decode_only));
  const device::OperatingPoint& point = d.point;
  for (const llm::StepOp& op : work.ops) {
    graph::OpCost cost = op.cost;
    cost.inference.kernel_count *= engine.kernels_per_op;
    const OpTimeEnergy one = predict(d, op, cost, point);
    const std::size_t s = at(share_of(op.part));
    e.shares.time_s[s] += one.time_s * op.count;
    e.shares.energy_j[s] += one.energy_j * op.count * gpus;
    e.gpu_time_s += one.time_s * op.count;
    e.kernel_count += cost.inference.kernel_count * op.count;
    e.flop_count += cost.inference.flop_count * op.count;
    e.byte_count += cost.inference.byte_count * op.count;
    if (rows) {
      e.rows.push_back(OpRow{op.name, op.part, op.count, one.time_s, one.energy_j,
                             one.time_s > 0 ? one.energy_j / one.time_s : 0,
                             cost.inference.flop_count, cost.inference.byte_count,
                             one.compute_bound});
    }
  }
  for (const llm::Collective& c : work.collectives) {
    const analytical::Link link = analytical::link_for(
        *d.device, c.group, engine.collective_latency_scale_up_s, engine.collective_latency_pcie_s,
        engine.link_efficiency, engine.pcie_efficiency);
    const analytical::CollectiveEstimate one = analytical::predict_collective(
        collective_op(c.kind), c.bytes, c.group, link, *d.device, d.point);
    const std::size_t s = at(Share::kCommunication);
    e.shares.time_s[s] += one.time_s * c.count;
    e.shares.energy_j[s] += one.energy_j * c.count * gpus;
    e.gpu_time_s += one.time_s * c.count;
    if (rows) {
      e.rows.push_back(OpRow{c.name, llm::Part::kCommunication, c.count, one.time_s, one.energy_j,
                             one.time_s > 0 ? one.energy_j / one.time_s : 0, 0, one.wire_bytes,
                             false});
    }
  }
  // Host: the scheduler's step, and the launches of kernels that no CUDA graph holds. Launches
  // overlap the GPU's work; a synchronous scheduler's time does not.
  const double launches = e.cuda_graph ? 0.0 : e.kernel_count * engine.host_per_kernel_s;
  const double scheduling =
      engine.host_per_step_s + engine.host_per_sequence_s * scheduled.value_or(shape.sequences());
  e.host_time_s = scheduling + launches;
  e.time_s = engine.host_overlapped ? std::max(e.gpu_time_s, e.host_time_s)
                                    : scheduling + std::max(e.gpu_time_s, launches);
  const double idle = e.time_s - e.gpu_time_s;
  if (idle > 0) {
    const std::size_t s = at(Share::kHostIdle);
    e.shares.time_s[s] += idle;
    e.shares.energy_j[s] += idle * analytical::baseline_power_w(*d.device, d.point) * gpus;
  }
  for (double j : e.shares.energy_j) e.energy_j += j;
  return e;
}

}  // namespace nnergy::serve
