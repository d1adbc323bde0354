#pragma once

#include <optional>
#include <string>

#include "nnergy/core/setting_name.h"
#include "nnergy/report/kernel_report.h"

namespace nnergy::api {

/// What `nnergy kernel gemm` needs: one GEMM C[batch][m×n] = A[m×k]·B[k×n] on a device.
struct KernelGemmRequest {
  std::string device;
  double m = 0;
  double n = 0;
  double k = 0;
  double batch = 1;
  std::string format = "bf16";  ///< a kernel::GemmFormat name
  std::string engine;           ///< whose kernels; empty: the default (tensorrt-llm)
  std::optional<double> clock_mhz;
  std::string devices_file;  ///< extra catalog; empty: none
  std::string command_line;
  SettingNames names = SettingNames::kKeyword;
};

/// The engines whose kernels `--engine` may name.
inline constexpr const char* kKernelEngines[] = {"tensorrt-llm", "vllm", "sglang", "pytorch"};

/// Time, power and energy of the GEMM by the kernel model (kernel/gemm_model.h) with the
/// calibrated parameters (data/kernel/calibrated.json). Throws InvalidInput naming the setting
/// for an unknown device, format or engine, a non-positive or absurd dimension, a format the
/// device cannot run and a clock it does not support.
report::KernelReport kernel_gemm(const KernelGemmRequest& request);

}  // namespace nnergy::api
