#include "nnergy/api/kernel.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "nnergy/core/data_directory.h"
#include "nnergy/core/error.h"
#include "nnergy/device/device_catalog.h"
#include "nnergy/kernel/kernel_parameters.h"

namespace nnergy::api {

namespace {

// Larger dimensions than any GPU's memory holds as a 16-bit matrix of one row.
constexpr double kMaxDimension = 1e9;

void check_dimension(const KernelGemmRequest& r, const char* setting, double value) {
  if (!(value >= 1 && value <= kMaxDimension && value == std::floor(value))) {
    throw InvalidInput(fmt::format("{} {}: expected a whole number from 1 to {:.0f}",
                                   setting_name(r.names, setting), value, kMaxDimension));
  }
}

}  // namespace

report::KernelReport kernel_gemm(const KernelGemmRequest& r) {
  check_dimension(r, "m", r.m);
  check_dimension(r, "n", r.n);
  check_dimension(r, "k", r.k);
  check_dimension(r, "batch", r.batch);
  const std::optional<kernel::GemmFormat> format = kernel::parse_gemm_format(r.format);
  if (!format) {
    throw InvalidInput(fmt::format("{} {}: not a GEMM format; expected one of: {}",
                                   setting_name(r.names, "precision"), r.format,
                                   kernel::known_gemm_formats()));
  }
  const std::string engine = r.engine.empty() ? kernel::KernelParameters::kDefaultEngine : r.engine;
  if (std::find(std::begin(kKernelEngines), std::end(kKernelEngines), engine) ==
      std::end(kKernelEngines)) {
    throw InvalidInput(fmt::format(
        "{} {}: not an engine whose kernels nnergy models; expected tensorrt-llm, vllm, sglang "
        "or pytorch",
        setting_name(r.names, "engine"), engine));
  }
  const std::filesystem::path data_dir = data_directory();
  const device::DeviceCatalog catalog =
      device::DeviceCatalog::load_with_user(data_dir, r.devices_file);
  const device::DeviceSpec& device = catalog.find(r.device, setting_name(r.names, "device"));
  if (r.clock_mhz) device.check_clock(*r.clock_mhz, setting_name(r.names, "clock"));
  const kernel::KernelParameters parameters = kernel::KernelParameters::load(data_dir);
  const kernel::GemmShape shape{r.m, r.n, r.k, r.batch};
  report::KernelReport out;
  try {
    out.estimate =
        kernel::predict_gemm(device, shape, *format, parameters, engine, r.clock_mhz.value_or(0));
  } catch (const InvalidInput& e) {
    throw InvalidInput(setting_name(r.names, "precision") + " " + r.format + ": " + e.what());
  }
  const kernel::GemmFormatInfo& f = kernel::info(*format);
  out.kernel = "gemm";
  out.description =
      fmt::format("{}{:.0f} x {:.0f} x {:.0f} (m x n x k) {} GEMM",
                  r.batch > 1 ? fmt::format("{:.0f} x ", r.batch) : "", r.m, r.n, r.k, f.name);
  out.device_id = device.id;
  out.device_name = device.name;
  out.engine = engine;
  out.format = std::string(f.name);
  out.shape = shape;
  out.peak_flop_per_s = *device.peak(f.math);
  out.boost_mhz = device.clock.boost_mhz;
  out.power_limit_w = device.tdp_w;
  out.sm_count = device.sm_count;
  out.notes.push_back(fmt::format(
      "predicted by nnergy's kernel model (tiles and waves over the SMs, roofline of the {} peak "
      "and the DRAM bandwidth) with {}; {}",
      device::to_string(f.math), out.estimate.parameters,
      parameters.provenance.empty() ? "not calibrated on measured kernels"
                                    : parameters.provenance));
  if (!parameters.accuracy.time.empty()) out.notes.push_back(parameters.accuracy.time);
  if (!parameters.accuracy.power.empty()) out.notes.push_back(parameters.accuracy.power);
  out.notes.push_back(fmt::format(
      "{}: {}; weights {} B, inputs {} B, outputs {} B per element{}", f.name, f.description,
      f.weight_bytes, f.input_bytes, f.output_bytes,
      f.quantizes_input ? "; the time includes the kernel that quantizes the 16-bit input" : ""));
  out.notes.push_back(
      "the time is the kernel's in a steady loop with its weights in DRAM (not L2), as engines "
      "replay it in a CUDA graph; the power is the whole board's while it runs steadily, idle "
      "included");
  out.context = RunContext::now(r.command_line);
  out.context.add("device", device.id).add("engine", engine).add("format", out.format);
  return out;
}

}  // namespace nnergy::api
