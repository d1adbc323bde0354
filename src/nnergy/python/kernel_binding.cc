#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <optional>
#include <string>

#include "bindings.h"
#include "nnergy/api/kernel.h"
#include "nnergy/core/json_text.h"
#include "nnergy/report/kernel_report.h"

namespace nnergy::python {

namespace py = pybind11;
using namespace pybind11::literals;

namespace {

void target(api::KernelRequest& r, const std::string& device, const std::string& engine,
            const std::optional<double>& clock_mhz, const std::string& devices_file,
            const std::string& command_line) {
  r.names = SettingNames::kKeyword;
  r.device = device;
  r.engine = engine;
  r.clock_mhz = clock_mhz;
  r.devices_file = devices_file;
  r.command_line = command_line;
}

}  // namespace

void bind_kernel(py::module_& module) {
  module.def(
      "kernel_gemm_json",
      [](double m, double n, double k, double batch, const std::string& precision,
         const std::string& device, const std::string& engine,
         const std::optional<double>& clock_mhz, const std::string& devices_file,
         const std::string& command_line) {
        api::KernelGemmRequest r;
        target(r, device, engine, clock_mhz, devices_file, command_line);
        r.m = m;
        r.n = n;
        r.k = k;
        r.batch = batch;
        r.format = precision;
        return core::json_text(report::to_json(api::kernel_gemm(r)), -1);
      },
      "m"_a, "n"_a, "k"_a, "batch"_a, "precision"_a, "device"_a, "engine"_a, "clock_mhz"_a,
      "devices_file"_a, "command_line"_a,
      "The `nnergy kernel gemm --json` document of one GEMM (api::kernel_gemm).");
  module.def(
      "kernel_attention_json",
      [](const std::string& phase, double batch, double seq, const std::optional<double>& queries,
         double heads, double kv_heads, double head_dim, double window,
         const std::string& precision, const std::string& kv_precision, const std::string& device,
         const std::string& engine, const std::optional<double>& clock_mhz,
         const std::string& devices_file, const std::string& command_line) {
        api::KernelAttentionRequest r;
        target(r, device, engine, clock_mhz, devices_file, command_line);
        r.phase = phase;
        r.batch = batch;
        r.seq = seq;
        r.queries = queries;
        r.heads = heads;
        r.kv_heads = kv_heads;
        r.head_dim = head_dim;
        r.window = window;
        r.precision = precision;
        r.kv_precision = kv_precision;
        return core::json_text(report::to_json(api::kernel_attention(r)), -1);
      },
      "phase"_a, "batch"_a, "seq"_a, "queries"_a, "heads"_a, "kv_heads"_a, "head_dim"_a, "window"_a,
      "precision"_a, "kv_precision"_a, "device"_a, "engine"_a, "clock_mhz"_a, "devices_file"_a,
      "command_line"_a,
      "The `nnergy kernel attention --json` document of one attention kernel "
      "(api::kernel_attention).");
  module.def(
      "kernel_moe_json",
      [](double tokens, double hidden, double inter, double topk, double experts, double ep,
         double tp, const std::string& routing, const std::string& precision,
         const std::string& device, const std::string& engine,
         const std::optional<double>& clock_mhz, const std::string& devices_file,
         const std::string& command_line) {
        api::KernelMoeRequest r;
        target(r, device, engine, clock_mhz, devices_file, command_line);
        r.tokens = tokens;
        r.hidden = hidden;
        r.inter = inter;
        r.topk = topk;
        r.experts = experts;
        r.ep = ep;
        r.tp = tp;
        r.routing = routing;
        r.format = precision;
        return core::json_text(report::to_json(api::kernel_moe(r)), -1);
      },
      "tokens"_a, "hidden"_a, "inter"_a, "topk"_a, "experts"_a, "ep"_a, "tp"_a, "routing"_a,
      "precision"_a, "device"_a, "engine"_a, "clock_mhz"_a, "devices_file"_a, "command_line"_a,
      "The `nnergy kernel moe --json` document of one fused MoE layer (api::kernel_moe).");
  module.def(
      "kernel_collective_json",
      [](const std::string& op, double bytes, int gpus, const std::string& device,
         const std::string& engine, const std::optional<double>& clock_mhz,
         const std::string& devices_file, const std::string& command_line) {
        api::KernelCollectiveRequest r;
        target(r, device, engine, clock_mhz, devices_file, command_line);
        r.op = op;
        r.bytes = bytes;
        r.gpus = gpus;
        return core::json_text(report::to_json(api::kernel_collective(r)), -1);
      },
      "op"_a, "bytes"_a, "gpus"_a, "device"_a, "engine"_a, "clock_mhz"_a, "devices_file"_a,
      "command_line"_a,
      "The `nnergy kernel all-reduce --json` document of one collective (api::kernel_collective).");
}

}  // namespace nnergy::python
