#include "nnergy/analytical/kernel_pass.h"

#include <gtest/gtest.h>

#include "nnergy/core/data_directory.h"
#include "nnergy/device/device_catalog.h"
#include "nnergy/kernel/gemm_model.h"

namespace nnergy::analytical {
namespace {

using device::Precision;

// The datasheet catalog (no whole-network calibration: convolution_time_scale 1).
device::DeviceSpec catalog_device(const std::string& id) {
  return device::DeviceCatalog::load(data_directory() / "devices.json").find(id);
}

graph::PassCost matrix_pass(const graph::GemmDims& g) {
  graph::PassCost p;
  p.mac_count = g.m * g.n * g.k * g.batch;
  p.flop_count = 2 * p.mac_count;
  p.byte_count = 2 * g.batch * (g.m * g.k + g.k * g.n + g.m * g.n);
  p.kernel_count = 1;
  return p;
}

constexpr double kRounding = 1e-12;  // relative

TEST(KernelPass, ASixteenBitProductIsTheKernelModelsGemm) {
  const device::DeviceSpec h100 = catalog_device("h100-sxm");
  const graph::GemmDims g{8192, 16384, 16384, 1};
  PassTraits traits;
  traits.gemms = {g};
  const OpEstimate e = predict_pass(h100, matrix_pass(g), graph::OpClass::kMatrix,
                                    {Precision::kBf16, h100.clock.boost_mhz}, traits);
  const kernel::KernelEstimate k =
      kernel::predict_gemm(h100, {g.m, g.n, g.k, g.batch}, kernel::GemmFormat::k16Bit,
                           kernel::KernelParameters::shipped(), "pytorch");
  EXPECT_NEAR(e.time_s, k.time_s, k.time_s * kRounding);
  EXPECT_NEAR(e.energy_j, k.energy_j, k.energy_j * kRounding);
  // A large bf16 GEMM on an H100 runs well above half the tensor peak (measured: about 80 %).
  EXPECT_GT(2 * g.m * g.n * g.k / e.time_s, 0.6 * *h100.peak(Precision::kBf16));
}

TEST(KernelPass, LeavesCudaCoreAndNarrowWorkToTheRoofline) {
  const device::DeviceSpec h100 = catalog_device("h100-sxm");
  const device::OperatingPoint bf16{Precision::kBf16, h100.clock.boost_mhz};
  const graph::GemmDims square{4096, 4096, 4096, 1};
  const std::vector<graph::GemmDims> gemms = {square};
  EXPECT_FALSE(kernel_pass(h100, matrix_pass(square), {Precision::kFp32, 1980}, gemms, false));
  // A depthwise convolution: one output channel per group, 9 taps.
  const std::vector<graph::GemmDims> depthwise = {{12544, 1, 9, 96}};
  EXPECT_FALSE(kernel_pass(h100, matrix_pass(depthwise[0]), bf16, depthwise, false));
  EXPECT_FALSE(kernel_pass(h100, matrix_pass(square), bf16, {}, false));
  // Pascal's fp16 runs on the vector units.
  const device::DeviceSpec pascal = catalog_device("gtx-1080");
  EXPECT_FALSE(kernel_pass(pascal, matrix_pass(square), {Precision::kFp16, 1733}, gemms, false));
  EXPECT_TRUE(kernel_pass(h100, matrix_pass(square), bf16, gemms, false));
}

TEST(KernelPass, TheWholeNetworkScalesStretchTheTimeNotThePower) {
  device::DeviceSpec h100 = catalog_device("h100-sxm");
  const device::OperatingPoint bf16{Precision::kBf16, h100.clock.boost_mhz};
  const std::vector<graph::GemmDims> gemms = {{4096, 4096, 4096, 1, true}};  // a convolution
  const OpEstimate plain = *kernel_pass(h100, matrix_pass(gemms[0]), bf16, gemms, false);
  h100.efficiency.convolution_time_scale = 1.5;
  h100.efficiency.backward_matrix_efficiency = 0.75;
  const OpEstimate forward = *kernel_pass(h100, matrix_pass(gemms[0]), bf16, gemms, false);
  const OpEstimate backward = *kernel_pass(h100, matrix_pass(gemms[0]), bf16, gemms, true);
  EXPECT_NEAR(forward.time_s, 1.5 * plain.time_s, plain.time_s * kRounding);
  EXPECT_NEAR(backward.time_s, 2.0 * plain.time_s, plain.time_s * kRounding);
  EXPECT_NEAR(backward.power_w, plain.power_w, plain.power_w * kRounding);
  // A GEMM call is the kernel model's as it is.
  const std::vector<graph::GemmDims> call = {{4096, 4096, 4096, 1, false}};
  EXPECT_NEAR(kernel_pass(h100, matrix_pass(call[0]), bf16, call, false)->time_s, plain.time_s,
              plain.time_s * kRounding);
}

}  // namespace
}  // namespace nnergy::analytical
