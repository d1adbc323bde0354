#include "nnergy/analytical/collective_model.h"

#include <fmt/format.h>

#include <algorithm>

namespace nnergy::analytical {

namespace {

// PCIe Gen4 x16, 64 GB/s both ways: the link of a GPU whose catalog entry gives none.
constexpr double kDefaultPcieBidirectional = 64e9;

}  // namespace

Link link_for(const device::DeviceSpec& device, int group, double nvlink_latency_s,
              double pcie_latency_s, double nvlink_efficiency, double pcie_efficiency) {
  const device::Interconnect& ic = device.interconnect;
  Link link;
  link.efficiency = nvlink_efficiency;
  if (ic.scale_up_domain_gpus >= group && ic.scale_up_bidirectional_byte_per_s > 0) {
    link.name = ic.scale_up_name;
    link.byte_per_s = ic.scale_up_bidirectional_byte_per_s / 2;
    link.latency_s = nvlink_latency_s;
    link.energy_j_per_byte = 10e-12;  // ~1.3 pJ/bit on NVLink-class SerDes
    return link;
  }
  const double pcie = ic.pcie_bidirectional_byte_per_s > 0 ? ic.pcie_bidirectional_byte_per_s
                                                           : kDefaultPcieBidirectional;
  link.name = ic.pcie_generation > 0 ? fmt::format("PCIe Gen{}", ic.pcie_generation) : "PCIe";
  link.byte_per_s = pcie / 2;
  link.latency_s = pcie_latency_s;
  link.efficiency = pcie_efficiency;
  link.energy_j_per_byte = 40e-12;  // ~5 pJ/bit through the host's PCIe switches
  return link;
}

double baseline_power_w(const device::DeviceSpec& device, const device::OperatingPoint& point) {
  const device::ArchlineParameters archline = device.archline_for(device::Precision::kFp32);
  const double v = device.relative_voltage(point.clock_mhz);
  const double ratio = point.clock_mhz / device.clock.boost_mhz;
  const double static_w = std::min(device.idle_w, archline.pi0_w);
  return static_w + (archline.pi0_w - static_w) * v * v * ratio;
}

CollectiveEstimate predict_collective(CollectiveOp op, double bytes, int group, const Link& link,
                                      const device::DeviceSpec& device,
                                      const device::OperatingPoint& point) {
  CollectiveEstimate e;
  if (group <= 1 || bytes <= 0) return e;
  const double n = group;
  switch (op) {
    case CollectiveOp::kAllReduce:
      e.wire_bytes = 2 * (n - 1) / n * bytes;
      break;
    case CollectiveOp::kAllGather:
      e.wire_bytes = (n - 1) * bytes;
      break;
    case CollectiveOp::kAllToAll:
      e.wire_bytes = (n - 1) / n * bytes;
      break;
    case CollectiveOp::kSendReceive:
      e.wire_bytes = bytes;
      break;
  }
  e.time_s = link.latency_s + e.wire_bytes / (link.byte_per_s * link.efficiency);
  const device::ArchlineParameters archline = device.archline_for(device::Precision::kFp32);
  e.energy_j = e.time_s * baseline_power_w(device, point) + e.wire_bytes * link.energy_j_per_byte +
               2 * e.wire_bytes * archline.eps_mem_j_per_byte;
  return e;
}

}  // namespace nnergy::analytical
