#include "nnergy/kernel/collective_model.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>

#include "nnergy/core/error.h"
#include "nnergy/kernel/kernel_power.h"

namespace nnergy::kernel {

namespace {

// PCIe Gen4 x16, 64 GB/s both ways: the link of a GPU whose catalog entry gives none.
constexpr double kDefaultPcieBidirectional = 64e9;
// The library that runs collectives an engine has no kernel of its own for.
constexpr const char* kNccl = "nccl";

double wire_bytes(const CollectiveShape& s) {
  const double n = s.gpus;
  return (s.op == CollectiveOp::kAllReduce ? 2 : 1) * (n - 1) / n * s.bytes;
}

double steps(const CollectiveShape& s) {
  switch (s.op) {
    case CollectiveOp::kAllReduce:
      return 2.0 * (s.gpus - 1);
    case CollectiveOp::kAllToAll:
      return 1;
    case CollectiveOp::kAllGather:
    case CollectiveOp::kReduceScatter:
      break;
  }
  return s.gpus - 1.0;
}

}  // namespace

std::string_view to_string(CollectiveOp op) {
  switch (op) {
    case CollectiveOp::kAllReduce:
      return "all-reduce";
    case CollectiveOp::kAllGather:
      return "all-gather";
    case CollectiveOp::kReduceScatter:
      return "reduce-scatter";
    case CollectiveOp::kAllToAll:
      return "all-to-all";
  }
  return "all-reduce";
}

std::optional<CollectiveOp> parse_collective(std::string_view name) {
  std::string plain;
  for (char c : name)
    if (c != '-' && c != '_')
      plain += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (plain == "allreduce") return CollectiveOp::kAllReduce;
  if (plain == "allgather") return CollectiveOp::kAllGather;
  if (plain == "reducescatter") return CollectiveOp::kReduceScatter;
  if (plain == "alltoall") return CollectiveOp::kAllToAll;
  return std::nullopt;
}

CollectiveLink collective_link(const device::DeviceSpec& device, int gpus) {
  const device::Interconnect& ic = device.interconnect;
  if (gpus < 2) throw InvalidInput(fmt::format("a collective needs at least 2 GPUs, got {}", gpus));
  CollectiveLink link;
  if (ic.scale_up_domain_gpus >= gpus && ic.scale_up_bidirectional_byte_per_s > 0) {
    link.name = ic.scale_up_name;
    link.byte_per_s = ic.scale_up_bidirectional_byte_per_s / 2;
    return link;
  }
  if (gpus > std::max(kMaxPcieGpus, ic.scale_up_domain_gpus)) {
    throw InvalidInput(fmt::format(
        "{} GPUs of {} are beyond one {} and one host's {} PCIe GPUs; nnergy models the "
        "collectives of one node",
        gpus, device.id,
        ic.scale_up_domain_gpus > 0
            ? fmt::format("{}-GPU {} domain", ic.scale_up_domain_gpus, ic.scale_up_name)
            : std::string("scale-up fabric (it has none)"),
        kMaxPcieGpus));
  }
  link.pcie = true;
  link.name = ic.pcie_generation > 0 ? fmt::format("PCIe Gen{}", ic.pcie_generation) : "PCIe";
  link.byte_per_s = (ic.pcie_bidirectional_byte_per_s > 0 ? ic.pcie_bidirectional_byte_per_s
                                                          : kDefaultPcieBidirectional) /
                    2;
  return link;
}

std::string collective_parameters_key(CollectiveOp op, bool pcie) {
  return fmt::format("{}{}", to_string(op), pcie ? " pcie" : "");
}

double collective_time_s(const CollectiveShape& s, const CollectiveLink& link,
                         const CollectiveParameters& p) {
  const double bandwidth = p.efficiency * link.byte_per_s;
  double t = p.latency_s + steps(s) * p.step_s + wire_bytes(s) / bandwidth;
  if (p.one_shot && s.op == CollectiveOp::kAllReduce)
    t = std::min(t, p.latency_s + p.step_s + (s.gpus - 1) * s.bytes / bandwidth);
  return t;
}

KernelEstimate predict_collective(const device::DeviceSpec& device, const CollectiveShape& s,
                                  const KernelParameters& parameters, const std::string& engine,
                                  double clock_mhz) {
  if (!(s.bytes >= 1) || !std::isfinite(s.bytes))
    throw InvalidInput(
        fmt::format("a collective's message must be at least 1 byte, got {}", s.bytes));
  const CollectiveLink link = collective_link(device, s.gpus);
  const std::string key = collective_parameters_key(s.op, link.pcie);
  // An engine's own all-reduce kernel where it has one fitted, NCCL otherwise.
  std::string library = kNccl;
  if (const auto e = parameters.collective.find(engine);
      e != parameters.collective.end() && e->second.count(key) > 0)
    library = engine;
  std::string from;
  const CollectiveParameters p = parameters.collective_for(library, key, &from);
  KernelEstimate e;
  e.time_s = collective_time_s(s, link, p);
  e.byte_count = wire_bytes(s);
  e.memory_s = e.byte_count / (p.efficiency * link.byte_per_s);
  const double fixed = p.latency_s + steps(s) * p.step_s;
  e.bound = fixed > e.memory_s ? Bound::kLatency : Bound::kLink;
  e.clock_mhz = clock_mhz > 0 ? clock_mhz : device.clock.boost_mhz;
  // Each GPU reads what it sends and writes what it receives: DRAM traffic twice the wire's.
  Activity a;
  a.memory = std::min(1.0, 2 * e.byte_count / e.time_s / device.memory_bandwidth_byte_per_s);
  e.power_w = std::clamp(unconstrained_power_w(device, parameters.power, a, e.clock_mhz),
                         device.idle_w, device.tdp_w);
  e.energy_j = e.power_w * e.time_s;
  set_uncertainty(e, parameters, "collective " + key);
  e.parameters = from.empty() ? fmt::format("{} {} kernels over {}", library, key, link.name)
                              : from + " over " + link.name;
  return e;
}

}  // namespace nnergy::kernel
