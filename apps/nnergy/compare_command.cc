// `nnergy compare`: one network on several devices, ranked by time, energy, EDP and power.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "command.h"
#include "nnergy/api/compare.h"
#include "nnergy/api/compare_serve.h"
#include "nnergy/core/error.h"
#include "nnergy/core/text.h"
#include "nnergy/device/precision.h"
#include "nnergy/report/comparison_report.h"
#include "nnergy/report/html_report.h"
#include "nnergy/report/output_format.h"
#include "nnergy/report/serve_comparison_report.h"

namespace nnergy::cli {

namespace {

struct CompareOptions {
  std::string model;
  std::string devices;  ///< comma-separated; empty: every GPU
  std::optional<std::int64_t> batch;
  std::string batches;  ///< comma-separated
  std::vector<std::string> dims;
  std::string devices_file;
  std::string mode = "inference";
  std::optional<std::string> precision;  ///< default: the file's tensor type
  std::optional<double> host_launch_us;
  std::optional<std::string> optimizer;
  bool json = false;
  bool csv = false;
  std::string output;  ///< also write the JSON document here
  std::string html;
  // --serve: a language model's serving deployments (api/compare_serve.h).
  bool serve = false;
  std::optional<double> input_tokens;
  std::optional<double> output_tokens;
  std::string gpus;  ///< comma-separated GPU counts
  std::optional<std::string> kv_precision;
  std::optional<std::string> engine;
  std::string workload = "serving";
  std::optional<double> max_itl_ms;
  std::optional<double> max_ttft_ms;
  std::string price_per_gpu_hour;  ///< one price, or DEVICE=PRICE pairs
  std::optional<double> grid_gco2e_per_kwh;
  std::string power_scope = "gpu";
};

// Comma-separated positive integers, e.g. "1,8,32,128" for `flag`.
std::vector<std::int64_t> parse_positive_list(const std::string& text, const std::string& flag,
                                              const std::string& example) {
  std::vector<std::int64_t> out;
  for (const std::string& item : split_trimmed(text, ',')) {
    std::size_t used = 0;
    std::int64_t value = 0;
    try {
      value = std::stoll(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != item.size() || value <= 0) {
      throw InvalidInput(fmt::format("{} {}: '{}' is not a positive integer; expected e.g. {} {}",
                                     flag, text, item, flag, example));
    }
    out.push_back(value);
  }
  if (out.empty()) throw InvalidInput(fmt::format("{}: expected e.g. {} {}", flag, flag, example));
  return out;
}

std::vector<std::string> parse_devices(const std::string& text) {
  std::vector<std::string> devices = split_trimmed(text, ',');
  for (const std::string& d : devices) {
    if (d.empty()) {
      throw InvalidInput("--devices " + text +
                         ": an empty name; expected comma-separated ids, e.g. a100-40gb,h100-sxm");
    }
  }
  return devices;
}

// "2.5" (every device) or "h100=2.5,b200=6" (by device name or alias; api::compare_serve
// looks them up in the catalog).
std::map<std::string, double> parse_prices(const std::string& text) {
  std::map<std::string, double> prices;
  for (const std::string& item : split_trimmed(text, ',')) {
    const std::size_t eq = item.find('=');
    const std::string_view view = item;
    const std::string device(eq == std::string::npos ? "" : trim(view.substr(0, eq)));
    const std::string value(eq == std::string::npos ? view : trim(view.substr(eq + 1)));
    std::size_t used = 0;
    double price = -1;
    try {
      price = std::stod(value, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != value.size() || used == 0 || (eq != std::string::npos && device.empty())) {
      throw InvalidInput(fmt::format(
          "--price-per-gpu-hour {}: '{}' is not a price; expected US$ per GPU-hour for every "
          "device (e.g. 2.5) or per device (e.g. h100=2.5,b200=6)",
          text, item));
    }
    prices[device] = price;
  }
  return prices;
}

std::string run_compare_serve(const CompareOptions& o, report::Format format,
                              const std::string& command_line) {
  if (o.batch || !o.batches.empty() || !o.dims.empty() || o.mode != "inference" ||
      o.host_launch_us || o.optimizer) {
    throw InvalidInput(
        "--serve: --batch, --batches, --dim, --mode, --host-launch-us and --optimizer are for "
        "networks; a serving comparison takes --input-tokens, --output-tokens, --gpus and "
        "latency targets (--max-itl-ms, --max-ttft-ms)");
  }
  if (!o.html.empty()) {
    throw InvalidInput(
        "--html with --serve: the serving comparison has text, --json and --csv; `nnergy "
        "serve MODEL --device D --html FILE` writes the report of one deployment");
  }
  if (!o.input_tokens || !o.output_tokens) {
    throw InvalidInput(
        "--serve: --input-tokens and --output-tokens are needed (the prompt and the generated "
        "tokens of one request, e.g. --input-tokens 1000 --output-tokens 200)");
  }
  api::CompareServeRequest r;
  r.names = SettingNames::kFlag;
  r.command_line = command_line;
  r.model = o.model;
  if (!o.devices.empty()) r.devices = parse_devices(o.devices);
  if (!o.gpus.empty()) {
    for (const std::int64_t n : parse_positive_list(o.gpus, "--gpus", "1,2,4,8"))
      r.gpus.push_back(static_cast<int>(std::min<std::int64_t>(n, 1 << 20)));
  }
  if (o.precision) r.precision = llm::parse_weight_format(*o.precision, "--precision");
  if (o.kv_precision) r.kv_precision = llm::parse_weight_format(*o.kv_precision, "--kv-precision");
  r.engine = o.engine;
  r.workload = serve::parse_workload(o.workload, "--workload");
  r.input_tokens = *o.input_tokens;
  r.output_tokens = *o.output_tokens;
  if (o.max_itl_ms) r.max_itl_s = *o.max_itl_ms / 1e3;
  if (o.max_ttft_ms) r.max_ttft_s = *o.max_ttft_ms / 1e3;
  if (!o.price_per_gpu_hour.empty()) r.price_per_gpu_hour = parse_prices(o.price_per_gpu_hour);
  r.grid_gco2e_per_kwh = o.grid_gco2e_per_kwh;
  r.power_scope = api::parse_power_scope(o.power_scope, "--power-scope");
  r.devices_file = o.devices_file;
  const report::ServeComparison result = api::compare_serve(r);
  report::write_document_files({o.output, "--output", "", "--html"}, report::HtmlKind::kCompare,
                               "nnergy compare --serve: " + result.model,
                               [&] { return report::to_json(result); });
  return report::render(result, format);
}

std::string run_compare(const CompareOptions& o, const std::string& command_line) {
  const report::Format format = report::choose_format(o.json, o.csv);
  if (o.serve) return run_compare_serve(o, format, command_line);
  if (o.input_tokens || o.output_tokens || !o.gpus.empty() || o.kv_precision || o.engine ||
      o.max_itl_ms || o.max_ttft_ms || !o.price_per_gpu_hour.empty() || o.grid_gco2e_per_kwh) {
    throw InvalidInput(
        "--input-tokens, --output-tokens, --gpus, --kv-precision, --engine, --max-itl-ms, "
        "--max-ttft-ms, --price-per-gpu-hour and --grid-gco2e-per-kwh compare serving a "
        "language model: add --serve");
  }
  if (o.batch && !o.batches.empty()) throw InvalidInput("--batch and --batches: choose one");
  api::CompareRequest r;
  r.names = SettingNames::kFlag;
  r.command_line = command_line;
  r.model = o.model;
  if (!o.devices.empty()) r.devices = parse_devices(o.devices);
  if (o.batch) r.batches = {*o.batch};
  if (!o.batches.empty()) r.batches = parse_positive_list(o.batches, "--batches", "1,8,32,128");
  r.dims = parse_dim_bindings(o.dims);
  r.devices_file = o.devices_file;
  r.mode = graph::parse_mode(o.mode, "--mode");
  if (o.precision) r.precision = device::parse_precision(*o.precision, "--precision");
  r.host_launch_us = o.host_launch_us;
  if (o.optimizer) r.optimizer = graph::parse_optimizer(*o.optimizer, "--optimizer");
  const report::ComparisonReport report = api::compare(r);
  report::write_document_files(
      {o.output, "--output", o.html, "--html"}, report::HtmlKind::kCompare,
      fmt::format("nnergy compare: {} on {} devices", report.network, report.devices.size()),
      [&] { return report::to_json(report); });
  return report::render(report, format);
}

}  // namespace

void add_compare_command(CLI::App& app, CommandRun* selected, const std::string& command_line) {
  auto options = std::make_shared<CompareOptions>();
  CLI::App* cmd = app.add_subcommand(
      "compare",
      "Which GPU, which clock: predict a network on several devices and rank them by time, "
      "energy, EDP and power per sample, at the boost clock and at each device's "
      "energy-optimal clock");
  cmd->add_option("model", options->model,
                  "zoo name (see `nnergy zoo`) or path to an .onnx file; with --serve a "
                  "language model (Hugging Face id or config.json)")
      ->required();
  cmd->add_option("--devices", options->devices,
                  "comma-separated device ids or aliases (see `nnergy devices`); default: every "
                  "GPU of the catalog");
  cmd->add_option("--batch", options->batch,
                  "samples per iteration; default: the file's fixed batch, else 1");
  cmd->add_option("--batches", options->batches,
                  "a batch sweep, comma-separated (e.g. 1,8,32,128): where each device stops "
                  "being host-bound and where the batch no longer fits");
  cmd->add_option("--dim", options->dims,
                  "bind another symbolic dimension: NAME=VALUE (repeatable)");
  cmd->add_option("--devices-file", options->devices_file,
                  "extra device catalog (JSON) whose devices replace or add to the built-in ones");
  cmd->add_option("--mode", options->mode, "inference or training")->capture_default_str();
  cmd->add_option("--precision", options->precision,
                  "fp32, tf32, fp16, bf16 or fp64; default: the type the file stores its "
                  "tensors in, else fp32");
  cmd->add_option("--host-launch-us", options->host_launch_us,
                  "host CPU time to launch one kernel in inference, us; training takes the "
                  "calibrated multiple of it (default: the calibrated eager PyTorch value; 0: the "
                  "host is never the bottleneck)");
  cmd->add_option("--optimizer", options->optimizer,
                  "training: sgd, sgd-momentum (default), adam or adamw");
  cmd->add_flag("--json", options->json, "write JSON instead of text");
  cmd->add_option("-o,--output", options->output,
                  "also write the JSON document (as --json prints it) to FILE");
  cmd->add_flag("--csv", options->csv, "write CSV (one row per device, batch and clock)");
  cmd->add_option("--html", options->html,
                  "also write a self-contained HTML report (ranking table, energy vs time "
                  "scatter with the Pareto front, batch sweep) to this file");
  cmd->add_flag("--serve", options->serve,
                "MODEL is a language model (a Hugging Face id or config.json): rank GPUs and GPU "
                "counts for serving it by energy per output token (see `nnergy serve`)");
  cmd->add_option("--input-tokens", options->input_tokens, "--serve: prompt tokens per request");
  cmd->add_option("--output-tokens", options->output_tokens,
                  "--serve: generated tokens per request");
  cmd->add_option("--gpus", options->gpus,
                  "--serve: GPU counts (tensor-parallel sizes) to compare, comma-separated "
                  "(default 1,2,4,8)");
  cmd->add_option("--kv-precision", options->kv_precision, "--serve: KV cache bf16, fp16 or fp8");
  cmd->add_option("--engine", options->engine,
                  "--serve: vllm (default), vllm-0.5.4, tensorrt-llm, sglang or hf-eager");
  cmd->add_option("--workload", options->workload,
                  "--serve: serving (continuous batching) or offline")
      ->capture_default_str();
  cmd->add_option("--max-itl-ms", options->max_itl_ms,
                  "--serve: latency target, time per output token (ms); each deployment at the "
                  "largest batch that meets it");
  cmd->add_option("--max-ttft-ms", options->max_ttft_ms,
                  "--serve: latency target, time to first token (ms)");
  cmd->add_option("--price-per-gpu-hour", options->price_per_gpu_hour,
                  "--serve: US$ per GPU-hour, for every device (2.5) or per device "
                  "(h100=2.5,b200=6): $ per million output tokens");
  cmd->add_option("--grid-gco2e-per-kwh", options->grid_gco2e_per_kwh,
                  "--serve: the grid's carbon intensity, gCO2e/kWh: emissions per million tokens");
  cmd->add_option("--power-scope", options->power_scope,
                  "--serve: gpu (NVML) or node (the servers' at the wall)")
      ->capture_default_str();
  cmd->callback([options, selected, command_line] {
    *selected = [options, command_line] {
      return CommandResult{run_compare(*options, command_line), 0};
    };
  });
}

}  // namespace nnergy::cli
