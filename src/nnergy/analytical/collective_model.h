#pragma once

// Collectives between GPUs (tensor- and expert-parallel all-reduces, all-gathers, all-to-alls,
// pipeline sends) next to the roofline: a latency plus the bytes each GPU puts on its link over
// the link's achieved bandwidth (NCCL's "bus bandwidth" accounting), and the energy of the GPUs
// while they take part.

#include <string>

#include "nnergy/device/device_spec.h"
#include "nnergy/device/operating_point.h"

namespace nnergy::analytical {

/// The collective's pattern.
enum class CollectiveOp { kAllReduce, kAllGather, kAllToAll, kSendReceive };

/// The link a group of GPUs talks over, and how well software uses it.
struct Link {
  std::string name;                   ///< e.g. "NVLink 4", "PCIe Gen5"
  double byte_per_s = 0;              ///< one direction, per GPU (datasheet bidirectional / 2)
  double efficiency = 0.7;            ///< achieved fraction of it (bus bandwidth)
  double latency_s = 10e-6;           ///< per collective: launch and synchronisation
  double energy_j_per_byte = 10e-12;  ///< link energy per byte sent (SerDes, switches)
};

/// The link `group` GPUs of `device` use: the scale-up fabric when the group fits in one of its
/// domains, else PCIe (Gen4 x16 when the catalog gives nothing). The latencies and achieved
/// shares of the bandwidth are the engine's, per kind of link.
Link link_for(const device::DeviceSpec& device, int group, double nvlink_latency_s,
              double pcie_latency_s, double nvlink_efficiency, double pcie_efficiency);

/// Time and energy of one collective on one GPU.
struct CollectiveEstimate {
  double time_s = 0;
  double energy_j = 0;    ///< one GPU: its baseline power while it lasts, plus link and DRAM
  double wire_bytes = 0;  ///< bytes the GPU sends
};

/// One collective of `bytes` per GPU (each GPU's contribution) among `group` GPUs over `link`:
/// the ring/one-shot volumes all-reduce 2(n−1)/n·S, all-gather (n−1)·S, all-to-all (n−1)/n·S,
/// send S; time = latency + wire bytes / (bandwidth · efficiency). Energy per GPU: the
/// archline's baseline power at the clock for the time (the GPU waits on the link, its SMs
/// mostly idle), plus the link's energy per byte sent and the DRAM traffic of reading and
/// writing the payload (ε_mem).
CollectiveEstimate predict_collective(CollectiveOp op, double bytes, int group, const Link& link,
                                      const device::DeviceSpec& device,
                                      const device::OperatingPoint& point);

/// Baseline power of `device` at `point`'s clock, W: what a busy-waiting GPU draws (the
/// archline's π0 split into its static part and a clocked part, as the pass model does).
double baseline_power_w(const device::DeviceSpec& device, const device::OperatingPoint& point);

}  // namespace nnergy::analytical
