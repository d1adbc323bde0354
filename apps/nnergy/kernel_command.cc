// `nnergy kernel gemm`: the kernel model as a command — what one GEMM costs on a GPU in time,
// board power and energy.
#include <fmt/format.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "command.h"
#include "nnergy/api/kernel.h"
#include "nnergy/core/error.h"
#include "nnergy/report/kernel_report.h"
#include "nnergy/report/output_format.h"

namespace nnergy::cli {

namespace {

struct GemmOptions {
  std::string device;
  double m = 0;
  double n = 0;
  double k = 0;
  double batch = 1;
  std::string precision = "bf16";
  std::string engine;
  std::optional<double> clock_mhz;
  std::string devices_file;
  bool json = false;
};

std::string run_gemm(const GemmOptions& o, const std::string& command_line) {
  api::KernelGemmRequest r;
  r.names = SettingNames::kFlag;
  r.command_line = command_line;
  r.device = o.device;
  r.m = o.m;
  r.n = o.n;
  r.k = o.k;
  r.batch = o.batch;
  r.format = o.precision;
  r.engine = o.engine;
  r.clock_mhz = o.clock_mhz;
  r.devices_file = o.devices_file;
  return report::render(api::kernel_gemm(r), report::choose_format(o.json));
}

}  // namespace

void add_kernel_command(CLI::App& app, CommandRun* selected, const std::string& command_line) {
  CLI::App* cmd = app.add_subcommand(
      "kernel", "Time, board power and energy of one GPU kernel by nnergy's kernel model");
  cmd->require_subcommand(0, 1);
  cmd->allow_extras();
  cmd->callback([cmd, selected] {
    if (!cmd->get_subcommands().empty()) return;
    const std::vector<std::string> extra = cmd->remaining();
    *selected = [extra]() -> CommandResult {
      throw InvalidInput(fmt::format(
          "nnergy kernel {}: expected a kernel class: gemm (attention, moe and collectives are "
          "not modelled as commands yet)",
          extra.empty() ? std::string("(none)") : extra.front()));
    };
  });
  auto gemm = std::make_shared<GemmOptions>();
  CLI::App* g = cmd->add_subcommand(
      "gemm", "one GEMM C[m x n] = A[m x k] * B[k x n] (B: a Linear layer's weight)");
  g->add_option("--m", gemm->m, "rows of A and C (tokens)")->required();
  g->add_option("--n", gemm->n, "columns of B and C (output features)")->required();
  g->add_option("--k", gemm->k, "the reduction (input features)")->required();
  g->add_option("--batch", gemm->batch, "independent products of this shape (batched GEMM)")
      ->capture_default_str();
  g->add_option("--precision", gemm->precision,
                "bf16 (fp16), fp8, fp8_block, nvfp4, int8, int8_wo, int4_wo, tf32, fp32")
      ->capture_default_str();
  g->add_option("--device", gemm->device, "GPU (catalog id or alias; nnergy devices)")->required();
  g->add_option("--engine", gemm->engine,
                "whose kernels: tensorrt-llm (default), vllm, sglang, pytorch");
  g->add_option("--clock", gemm->clock_mhz, "SM clock, MHz (default: boost)");
  g->add_option("--devices-file", gemm->devices_file, "extra device catalog (JSON)");
  g->add_flag("--json", gemm->json, "write JSON instead of text");
  g->callback([gemm, selected, command_line] {
    *selected = [gemm, command_line] { return CommandResult{run_gemm(*gemm, command_line), 0}; };
  });
}

}  // namespace nnergy::cli
