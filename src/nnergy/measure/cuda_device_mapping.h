#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "nnergy/measure/nvml_library.h"

/// Which NVML GPU a CUDA device is, so that a program that runs work on CUDA's device N measures
/// the power of that same GPU. CUDA numbers devices fastest first unless told otherwise, NVML in
/// PCI bus order, and CUDA_VISIBLE_DEVICES (set by cluster schedulers) renumbers CUDA's devices
/// but not NVML's.
namespace nnergy::measure {

/// The ordinal N of a CUDA device written "cuda:N" or "N" (N: 1 to 4 decimal digits), as the
/// `--device` flags take it; std::nullopt for anything else, which the caller reports.
std::optional<int> parse_cuda_ordinal(std::string_view text);

/// Sets CUDA_DEVICE_ORDER=PCI_BUS_ID unless the environment already has a value, so that CUDA
/// numbers devices as NVML does. Must run before the process initialises CUDA. Not thread-safe
/// (setenv).
void use_pci_bus_order_for_cuda();

/// NVML's index of CUDA device `cuda_device` (>= 0) under the current environment: the device
/// itself without CUDA_VISIBLE_DEVICES, else that list's entry number `cuda_device`, a GPU index
/// or a GPU UUID (a prefix such as "GPU-8f3a" is enough, as CUDA accepts). Throws InvalidInput
/// naming `flag` and CUDA_VISIBLE_DEVICES when the list is too short, names no GPU NVML has, or
/// names a MIG instance (no power reading of its own). Does not check the index against NVML's
/// device count for an index entry.
unsigned int nvml_index_of_cuda_device(const NvmlLibrary& nvml, int cuda_device,
                                       const std::string& flag = "--device");

}  // namespace nnergy::measure
