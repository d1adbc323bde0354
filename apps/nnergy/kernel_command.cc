// `nnergy kernel gemm|attention|moe|all-reduce|...`: the kernel model as a command — what one
// GEMM, fused attention kernel, MoE layer or collective costs on a GPU in time, board power and
// energy.
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

// The options every kernel class shares: where it runs, whose kernels, the output.
template <typename Request>
struct Options {
  Request request;
  bool json = false;
};

void add_target_options(CLI::App* c, api::KernelRequest& r, bool& json) {
  c->add_option("--device", r.device, "GPU (catalog id or alias; nnergy devices)")->required();
  c->add_option("--engine", r.engine,
                "whose kernels: tensorrt-llm (default), vllm, sglang, pytorch");
  c->add_option("--clock", r.clock_mhz, "SM clock, MHz (default: boost)");
  c->add_option("--devices-file", r.devices_file, "extra device catalog (JSON)");
  c->add_flag("--json", json, "write JSON instead of text");
}

template <typename Request, typename Predict>
void on_run(CLI::App* c, const std::shared_ptr<Options<Request>>& o, CommandRun* selected,
            const std::string& command_line, Predict predict) {
  c->callback([o, selected, command_line, predict] {
    *selected = [o, command_line, predict] {
      Request r = o->request;
      r.names = SettingNames::kFlag;
      r.command_line = command_line;
      return CommandResult{report::render(predict(r), report::choose_format(o->json)), 0};
    };
  });
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
          "nnergy kernel {}: expected a kernel class: gemm, attention, moe, all-reduce, "
          "all-gather, reduce-scatter or all-to-all",
          extra.empty() ? std::string("(none)") : extra.front()));
    };
  });
  auto gemm = std::make_shared<Options<api::KernelGemmRequest>>();
  api::KernelGemmRequest& gr = gemm->request;
  CLI::App* g = cmd->add_subcommand(
      "gemm", "one GEMM C[m x n] = A[m x k] * B[k x n] (B: a Linear layer's weight)");
  g->add_option("--m", gr.m, "rows of A and C (tokens)")->required();
  g->add_option("--n", gr.n, "columns of B and C (output features)")->required();
  g->add_option("--k", gr.k, "the reduction (input features)")->required();
  g->add_option("--batch", gr.batch, "independent products of this shape (batched GEMM)")
      ->capture_default_str();
  g->add_option("--precision", gr.format,
                "bf16 (fp16), fp8, fp8_block, nvfp4, int8, int8_wo, int4_wo, tf32, fp32")
      ->capture_default_str();
  add_target_options(g, gr, gemm->json);
  on_run(g, gemm, selected, command_line, api::kernel_gemm);

  auto attention = std::make_shared<Options<api::KernelAttentionRequest>>();
  api::KernelAttentionRequest& ar = attention->request;
  CLI::App* a = cmd->add_subcommand(
      "attention", "one fused attention kernel (FlashAttention-style prefill, paged decode)");
  a->add_option("--phase", ar.phase, "prefill (a prompt or chunk) or decode (one new token)")
      ->capture_default_str();
  a->add_option("--batch", ar.batch, "sequences in the kernel")->capture_default_str();
  a->add_option("--seq", ar.seq,
                "prefill: the prompt's tokens; decode: the tokens already in the KV cache")
      ->required();
  a->add_option("--queries", ar.queries,
                "new tokens per sequence (prefill: a chunk of the prompt, default all of it; "
                "decode: default 1, more for speculative decoding)");
  a->add_option("--heads", ar.heads, "query heads (on this GPU)")->capture_default_str();
  a->add_option("--kv-heads", ar.kv_heads, "key/value heads (on this GPU)")->capture_default_str();
  a->add_option("--head-dim", ar.head_dim, "head dimension")->capture_default_str();
  a->add_option("--window", ar.window, "sliding window, tokens (0: full causal)")
      ->capture_default_str();
  a->add_option("--precision", ar.precision, "the products: bf16 (fp16) or fp8 (prefill)")
      ->capture_default_str();
  a->add_option("--kv-precision", ar.kv_precision, "the KV cache: bf16 (fp16) or fp8")
      ->capture_default_str();
  add_target_options(a, ar, attention->json);
  on_run(a, attention, selected, command_line, api::kernel_attention);

  auto moe = std::make_shared<Options<api::KernelMoeRequest>>();
  api::KernelMoeRequest& mr = moe->request;
  CLI::App* m = cmd->add_subcommand(
      "moe", "one fused MoE layer: the routed experts' grouped GEMMs on one GPU");
  m->add_option("--tokens", mr.tokens, "tokens entering the layer")->required();
  m->add_option("--hidden", mr.hidden, "the model's hidden size")->required();
  m->add_option("--inter", mr.inter, "one expert's intermediate size (before --tp)")->required();
  m->add_option("--topk", mr.topk, "experts each token chooses")->required();
  m->add_option("--experts", mr.experts, "routed experts of the layer")->required();
  m->add_option("--ep", mr.ep, "expert parallelism: this GPU holds experts/ep")
      ->capture_default_str();
  m->add_option("--tp", mr.tp, "tensor parallelism inside each expert")->capture_default_str();
  m->add_option("--routing", mr.routing, "balanced, power-law (alpha 1.01) or power-law:ALPHA")
      ->capture_default_str();
  m->add_option("--precision", mr.format, "bf16 (fp16), fp8, fp8_block, nvfp4, ...")
      ->capture_default_str();
  add_target_options(m, mr, moe->json);
  on_run(m, moe, selected, command_line, api::kernel_moe);

  for (const char* name : {"all-reduce", "all-gather", "reduce-scatter", "all-to-all"}) {
    auto collective = std::make_shared<Options<api::KernelCollectiveRequest>>();
    api::KernelCollectiveRequest& cr = collective->request;
    cr.op = name;
    const bool all_reduce = std::string(name) == "all-reduce";
    CLI::App* c = cmd->add_subcommand(
        name, fmt::format("one {} among the GPUs of one node ({})", name,
                          all_reduce ? "the engine's own all-reduce kernel, or NCCL's" : "NCCL"));
    c->add_option("--bytes", cr.bytes,
                  "the message as nccl-tests sizes it (all-reduce: the tensor; all-gather: the "
                  "gathered output)")
        ->required();
    c->add_option("--gpus", cr.gpus, "GPUs taking part")->capture_default_str();
    add_target_options(c, cr, collective->json);
    on_run(c, collective, selected, command_line, api::kernel_collective);
  }
}

}  // namespace nnergy::cli
