#pragma once

// A made-up GPU with round numbers, so that every expected value of the kernel model's tests can
// be worked out by hand: 100 SMs, 1000 TFLOP/s of bf16 (2000 of fp8), 10 of fp32, 1 TB/s, 1 GHz
// at a constant voltage, 100–400 W, 8 GPUs on a 100 GB/s-each-way fabric and PCIe Gen5.
#include "nnergy/device/device_spec.h"
#include "nnergy/kernel/kernel_parameters.h"

namespace nnergy::kernel {

inline device::DeviceSpec toy_device() {
  device::DeviceSpec d;
  d.id = "toy";
  d.sm_count = 100;
  d.peak_flop_per_s = {{device::Precision::kFp32, 10e12},
                       {device::Precision::kBf16, 1000e12},
                       {device::Precision::kFp8, 2000e12}};
  d.memory_bandwidth_byte_per_s = 1e12;
  d.tdp_w = 400;
  d.idle_w = 100;
  d.clock = {500, 1000, 1000, 100};
  d.dvfs = {1.0, 1000};  // constant voltage: power scales with the clock alone
  d.interconnect.scale_up_name = "ToyLink";
  d.interconnect.scale_up_bidirectional_byte_per_s = 200e9;
  d.interconnect.scale_up_domain_gpus = 8;
  d.interconnect.pcie_generation = 5;
  d.interconnect.pcie_bidirectional_byte_per_s = 128e9;
  return d;
}

// GEMM parameters that make every time a closed form: η_c = 0.5 (5 TFLOP/s of bf16 per SM on the
// toy GPU), the full bandwidth, no fixed times, no tile or depth effects, no overlap loss.
inline GemmParameters toy_gemm_parameters() {
  GemmParameters p;
  p.compute_efficiency = 0.5;
  p.memory_efficiency = 1.0;
  p.latency_s = 0;
  p.k_half = 0;
  p.tile_exponent = 0;
  p.overlap_loss = 0;
  p.quantize_latency_s = 1e-6;
  return p;
}

}  // namespace nnergy::kernel
