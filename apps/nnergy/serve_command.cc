// `nnergy serve`: time, power and energy per token of serving a language model.
#include <fmt/format.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "command.h"
#include "nnergy/api/serve.h"
#include "nnergy/core/error.h"
#include "nnergy/core/text.h"
#include "nnergy/report/html_report.h"
#include "nnergy/report/output_format.h"
#include "nnergy/report/serve_report.h"

namespace nnergy::cli {

namespace {

struct ServeOptions {
  std::string model;
  std::optional<std::string> device;
  std::optional<int> gpus;
  std::optional<int> tp;
  std::optional<int> pp;
  std::optional<int> ep;
  std::optional<std::string> precision;
  std::optional<std::string> kv_precision;
  std::optional<std::string> engine;
  std::string workload = "serving";
  std::optional<double> input_tokens;
  std::optional<double> output_tokens;
  std::optional<int> max_batch;
  std::optional<int> batch;
  std::optional<int> max_batched_tokens;
  std::optional<double> clock_mhz;
  bool sweep_clocks = false;
  std::string sweep_batch;
  std::string power_scope = "gpu";
  std::string devices_file;
  bool layers = false;
  bool list_models = false;
  bool json = false;
  bool csv = false;
  std::string output;
  std::string html;
};

std::vector<int> parse_batch_list(const std::string& text) {
  std::vector<int> out;
  for (const std::string& item : split_trimmed(text, ',')) {
    try {
      std::size_t used = 0;
      const long long v = std::stoll(item, &used);
      if (used != item.size() || v < 1 || v > 1'000'000) throw std::invalid_argument(item);
      out.push_back(static_cast<int>(v));
    } catch (const std::exception&) {
      throw InvalidInput("--sweep-batch " + text +
                         ": expected positive integers separated by "
                         "commas (e.g. 1,8,32,128), found '" +
                         item + "'");
    }
  }
  return out;
}

api::ServeRequest to_request(const ServeOptions& o, const std::string& command_line) {
  api::ServeRequest r;
  r.names = SettingNames::kFlag;
  r.command_line = command_line;
  r.model = o.model;
  r.device = o.device;
  r.gpus = o.gpus;
  r.tp = o.tp;
  r.pp = o.pp;
  r.ep = o.ep;
  if (o.precision) r.precision = llm::parse_weight_format(*o.precision, "--precision");
  if (o.kv_precision) r.kv_precision = llm::parse_weight_format(*o.kv_precision, "--kv-precision");
  r.engine = o.engine;
  r.workload = serve::parse_workload(o.workload, "--workload");
  if (!o.input_tokens || !o.output_tokens) {
    throw InvalidInput(
        "--input-tokens and --output-tokens: both are needed (the prompt and the generated "
        "tokens of one request, e.g. --input-tokens 1000 --output-tokens 200)");
  }
  r.input_tokens = *o.input_tokens;
  r.output_tokens = *o.output_tokens;
  if (o.batch && o.max_batch) throw InvalidInput("--batch and --max-batch: choose one");
  if (o.batch && r.workload != serve::Workload::kOffline) {
    throw InvalidInput(
        "--batch: the batch of an offline run (--workload offline); serving takes "
        "--max-batch, the running sequences");
  }
  r.max_batch = o.batch ? o.batch : o.max_batch;
  r.max_batched_tokens = o.max_batched_tokens;
  r.clock_mhz = o.clock_mhz;
  r.sweep_clocks = o.sweep_clocks;
  if (!o.sweep_batch.empty()) r.sweep_batch = parse_batch_list(o.sweep_batch);
  r.power_scope = api::parse_power_scope(o.power_scope, "--power-scope");
  r.layers = o.layers;
  r.devices_file = o.devices_file;
  return r;
}

std::string run_serve(const ServeOptions& o, const std::string& command_line) {
  const report::Format format = report::choose_format(o.json, o.csv);
  if (o.list_models) {
    const std::vector<report::ModelListing> models = api::list_models();
    return report::render(models, format);
  }
  if (o.model.empty()) {
    throw InvalidInput(
        "serve: expected a MODEL (a Hugging Face id such as "
        "meta-llama/Llama-3.1-8B-Instruct, or a config.json path); "
        "`nnergy serve --list-models` lists the catalog");
  }
  const report::ServeReport report = api::serve(to_request(o, command_line));
  report::write_document_files(
      {o.output, "--output", o.html, "--html"}, report::HtmlKind::kServe,
      fmt::format("nnergy serve: {} on {} × {}", report.model.id, report.gpus, report.device_id),
      [&] { return report::to_json(report); });
  return report::render(report, format, o.layers);
}

}  // namespace

void add_serve_command(CLI::App& app, CommandRun* selected, const std::string& command_line) {
  auto o = std::make_shared<ServeOptions>();
  CLI::App* cmd = app.add_subcommand(
      "serve",
      "Predict time, power and energy per token of serving a language model (a Hugging Face id "
      "or config.json) on GPUs: prefill and decode, continuous batching, parallelism, precisions");
  cmd->add_option("model", o->model,
                  "Hugging Face id (see --list-models; -Instruct, -FP8, dates resolve) or the "
                  "path of a config.json");
  cmd->add_flag("--list-models", o->list_models, "list the embedded models and exit");
  cmd->add_option(
      "--device", o->device,
      fmt::format("GPU (id, alias or nvidia-smi name); default {}", api::kDefaultServeDevice));
  cmd->add_option("--gpus", o->gpus, "GPUs in all (default tp × pp; more: data-parallel replicas)");
  cmd->add_option("--tp", o->tp, "tensor-parallel size (default: the smallest that fits)");
  cmd->add_option("--pp", o->pp, "pipeline-parallel stages (default 1)");
  cmd->add_option("--ep", o->ep, "expert-parallel size for mixture-of-experts models (default 1)");
  cmd->add_option("--precision", o->precision,
                  "weights: bf16, fp16, fp8, nvfp4, mxfp4, int8 (W8A8) or int4 (AWQ/GPTQ); "
                  "default: the checkpoint's");
  cmd->add_option("--kv-precision", o->kv_precision,
                  "KV cache: bf16, fp16 or fp8 (default 16-bit)");
  cmd->add_option("--engine", o->engine,
                  "vllm (default, current release), vllm-0.5.4, tensorrt-llm, sglang or hf-eager");
  cmd->add_option("--workload", o->workload,
                  "serving (steady-state continuous batching) or offline (one batch)")
      ->capture_default_str();
  cmd->add_option("--input-tokens", o->input_tokens, "prompt tokens per request");
  cmd->add_option("--output-tokens", o->output_tokens, "generated tokens per request");
  cmd->add_option("--max-batch", o->max_batch,
                  "serving: running sequences per replica (default: the largest that fits)");
  cmd->add_option("--batch", o->batch,
                  "offline: requests in the batch (default: the largest that fits)");
  cmd->add_option("--max-batched-tokens", o->max_batched_tokens,
                  "tokens per step for chunked prefill (default: the engine's)");
  cmd->add_option("--clock-mhz", o->clock_mhz, "GPU core clock, MHz (default: boost)");
  cmd->add_flag("--sweep-clocks", o->sweep_clocks,
                "predict over the GPU's clocks, name the energy-optimal one");
  cmd->add_option("--sweep-batch", o->sweep_batch,
                  "comma-separated batches to predict too (e.g. 1,8,32,128)");
  cmd->add_option(
         "--power-scope", o->power_scope,
         "gpu (the GPUs' power, as NVML) or node (the servers' at the wall, estimated host)")
      ->capture_default_str();
  cmd->add_option("--devices-file", o->devices_file, "extra device catalog (JSON)");
  cmd->add_flag("--layers", o->layers, "list the operations of one decode step");
  cmd->add_flag("--json", o->json, "write JSON instead of text");
  cmd->add_flag("--csv", o->csv, "write CSV (one row per sweep point, or the totals)");
  cmd->add_option("-o,--output", o->output, "also write the JSON document to FILE");
  cmd->add_option("--html", o->html, "also write a self-contained HTML report to FILE");
  cmd->callback([o, selected, command_line] {
    *selected = [o, command_line] { return CommandResult{run_serve(*o, command_line), 0}; };
  });
}

}  // namespace nnergy::cli
