#pragma once

// Time, board power and energy of one collective among the GPUs of one node, from the link in
// the device's datasheet (NVLink/NVSwitch one way per GPU, else PCIe) and parameters fitted on
// measured NCCL and engine all-reduce kernels (kernel/kernel_parameters.h):
//
//   t = t0 + steps·α + wire/(η·B)
//
// - wire: the bytes each GPU sends, NCCL's bus-bandwidth volumes: all-reduce 2(n−1)/n·S,
//   all-gather, reduce-scatter and all-to-all (n−1)/n·S, S the message as nccl-tests sizes it
//   (the all-reduce's tensor, the all-gather's gathered output, the reduce-scatter's input, one
//   GPU's all-to-all buffer);
// - steps: the ring's 2(n−1) for an all-reduce, n−1 for all-gather and reduce-scatter, one for
//   an all-to-all;
// - the engines' custom all-reduce kernels (TensorRT-LLM, vLLM, SGLang) read the whole tensor of
//   every peer in one step when that is faster (one-shot: (n−1)·S in one step).

#include <optional>
#include <string>
#include <string_view>

#include "nnergy/device/device_spec.h"
#include "nnergy/kernel/gemm_model.h"
#include "nnergy/kernel/kernel_parameters.h"

namespace nnergy::kernel {

enum class CollectiveOp { kAllReduce, kAllGather, kReduceScatter, kAllToAll };
/// "all-reduce", "all-gather", "reduce-scatter", "all-to-all".
std::string_view to_string(CollectiveOp op);
/// Those names, with '_' for '-' and without it ("allreduce", "alltoall"); nullopt otherwise.
std::optional<CollectiveOp> parse_collective(std::string_view name);

/// One collective: `bytes` as nccl-tests sizes its message among `gpus` GPUs of one node.
struct CollectiveShape {
  CollectiveOp op = CollectiveOp::kAllReduce;
  double bytes = 0;
  int gpus = 2;
};

/// The link a collective of `gpus` GPUs of `device` runs over: its scale-up fabric when they fit
/// in one domain, else PCIe through the host (at most kMaxPcieGpus).
struct CollectiveLink {
  std::string name;       ///< "NVLink 4", "PCIe Gen5"
  bool pcie = false;      ///< the parameters' link kind
  double byte_per_s = 0;  ///< one direction per GPU (datasheet bidirectional / 2)
};
/// GPUs one PCIe host holds.
inline constexpr int kMaxPcieGpus = 8;
/// Throws InvalidInput when `gpus` is below 2 or beyond the device's fabric and one host.
CollectiveLink collective_link(const device::DeviceSpec& device, int gpus);

/// The parameters' key: "all-reduce", "all-reduce pcie".
std::string collective_parameters_key(CollectiveOp op, bool pcie);

/// Predicts one collective with `engine`'s kernels (its custom all-reduce where fitted, NCCL
/// otherwise) on `gpus` GPUs of `device`; the power is each GPU's board power while it runs at
/// `clock_mhz` (boost when 0): DRAM reads and writes of the payload, the clocked share. The time
/// does not depend on the SM clock (the link bounds it). Throws InvalidInput for a non-positive
/// size or a group beyond the fabric.
KernelEstimate predict_collective(const device::DeviceSpec& device, const CollectiveShape& shape,
                                  const KernelParameters& parameters,
                                  const std::string& engine = KernelParameters::kDefaultEngine,
                                  double clock_mhz = 0);

/// The time alone with explicit parameters (`one_shot`: the library may read every peer's
/// tensor in one step): what the fit evaluates.
double collective_time_s(const CollectiveShape& shape, const CollectiveLink& link,
                         const CollectiveParameters& p);

}  // namespace nnergy::kernel
