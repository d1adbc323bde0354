#include "nnergy/api/kernel.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string_view>

#include "nnergy/core/data_directory.h"
#include "nnergy/core/error.h"
#include "nnergy/device/device_catalog.h"
#include "nnergy/kernel/attention_model.h"
#include "nnergy/kernel/collective_model.h"
#include "nnergy/kernel/kernel_parameters.h"
#include "nnergy/kernel/moe_model.h"

namespace nnergy::api {

namespace {

// Larger dimensions than any GPU's memory holds as a 16-bit matrix of one row.
constexpr double kMaxDimension = 1e9;

void check_dimension(const KernelRequest& r, const char* setting, double value, double lowest = 1) {
  if (!(value >= lowest && value <= kMaxDimension && value == std::floor(value))) {
    throw InvalidInput(fmt::format("{} {}: expected a whole number from {:.0f} to {:.0f}",
                                   setting_name(r.names, setting), value, lowest, kMaxDimension));
  }
}

// What every kernel class resolves the same way: the engine, the device, its clock and the
// fitted parameters.
struct Resolved {
  std::string engine;
  device::DeviceSpec device;
  kernel::KernelParameters parameters;
};

Resolved resolve(const KernelRequest& r) {
  Resolved out;
  out.engine = r.engine.empty() ? kernel::KernelParameters::kDefaultEngine : r.engine;
  if (std::find(std::begin(kKernelEngines), std::end(kKernelEngines), out.engine) ==
      std::end(kKernelEngines)) {
    throw InvalidInput(fmt::format(
        "{} {}: not an engine whose kernels nnergy models; expected tensorrt-llm, vllm, sglang "
        "or pytorch",
        setting_name(r.names, "engine"), out.engine));
  }
  const std::filesystem::path data_dir = data_directory();
  const device::DeviceCatalog catalog =
      device::DeviceCatalog::load_with_user(data_dir, r.devices_file);
  out.device = catalog.find(r.device, setting_name(r.names, "device"));
  if (r.clock_mhz) out.device.check_clock(*r.clock_mhz, setting_name(r.names, "clock"));
  out.parameters = kernel::KernelParameters::load(data_dir);
  return out;
}

// The report's device, engine, accuracy and context.
void describe(const KernelRequest& r, const Resolved& in, const std::string& format,
              const std::string& accuracy, report::KernelReport& out) {
  out.device_id = in.device.id;
  out.device_name = in.device.name;
  out.engine = in.engine;
  out.format = format;
  out.boost_mhz = in.device.clock.boost_mhz;
  out.power_limit_w = in.device.tdp_w;
  out.sm_count = in.device.sm_count;
  if (!accuracy.empty()) out.notes.push_back(accuracy);
  if (!in.parameters.accuracy.power.empty()) out.notes.push_back(in.parameters.accuracy.power);
  out.context = RunContext::now(r.command_line);
  out.context.add("device", in.device.id).add("engine", in.engine).add("format", format);
}

std::string provenance(const kernel::KernelParameters& p) {
  return p.provenance.empty() ? "not calibrated on measured kernels" : p.provenance;
}

bool parse_fp8(const KernelRequest& r, const char* setting, const std::string& value) {
  if (value == "fp8") return true;
  if (value == "bf16" || value == "fp16") return false;
  throw InvalidInput(
      fmt::format("{} {}: expected bf16 (fp16) or fp8", setting_name(r.names, setting), value));
}

// The default exponent of "power-law" routing: the skew of the measured MoE tables.
constexpr double kDefaultPowerLawAlpha = 1.01;

double routing_alpha(const KernelMoeRequest& r) {
  if (r.routing == "balanced") return 0;
  constexpr std::string_view kPowerLaw = "power-law";
  if (r.routing == kPowerLaw) return kDefaultPowerLawAlpha;
  if (r.routing.rfind("power-law:", 0) == 0) {
    const std::string text = r.routing.substr(kPowerLaw.size() + 1);
    char* end = nullptr;
    const double alpha = std::strtod(text.c_str(), &end);
    if (!text.empty() && end == text.c_str() + text.size() && alpha > 0 && alpha <= 10)
      return alpha;
  }
  throw InvalidInput(
      fmt::format("{} {}: expected balanced, power-law or power-law:<exponent in (0, 10]>",
                  setting_name(r.names, "routing"), r.routing));
}

// The GEMM format `value` of `r`'s --precision names.
kernel::GemmFormat gemm_format(const KernelRequest& r, const std::string& value) {
  const std::optional<kernel::GemmFormat> format = kernel::parse_gemm_format(value);
  if (!format) {
    throw InvalidInput(fmt::format("{} {}: not a GEMM format; expected one of: {}",
                                   setting_name(r.names, "precision"), value,
                                   kernel::known_gemm_formats()));
  }
  return *format;
}

}  // namespace

report::KernelReport kernel_gemm(const KernelGemmRequest& r) {
  check_dimension(r, "m", r.m);
  check_dimension(r, "n", r.n);
  check_dimension(r, "k", r.k);
  check_dimension(r, "batch", r.batch);
  const kernel::GemmFormat format = gemm_format(r, r.format);
  const Resolved in = resolve(r);
  const device::DeviceSpec& device = in.device;
  const kernel::KernelParameters& parameters = in.parameters;
  const std::string& engine = in.engine;
  const kernel::GemmShape shape{r.m, r.n, r.k, r.batch};
  report::KernelReport out;
  try {
    out.estimate =
        kernel::predict_gemm(device, shape, format, parameters, engine, r.clock_mhz.value_or(0));
  } catch (const InvalidInput& e) {
    throw InvalidInput(setting_name(r.names, "precision") + " " + r.format + ": " + e.what());
  }
  const kernel::GemmFormatInfo& f = kernel::info(format);
  out.kernel = "gemm";
  out.description =
      fmt::format("{}{:.0f} x {:.0f} x {:.0f} (m x n x k) {} GEMM",
                  r.batch > 1 ? fmt::format("{:.0f} x ", r.batch) : "", r.m, r.n, r.k, f.name);
  out.shape = {{"m", r.m}, {"n", r.n}, {"k", r.k}, {"batch", r.batch}};
  out.peak_flop_per_s = *device.peak(kernel::units(device, format));
  out.notes.push_back(fmt::format(
      "predicted by nnergy's kernel model (tiles and waves over the SMs, roofline of the {} peak "
      "and the DRAM bandwidth) with {}; {}",
      device::to_string(f.math), out.estimate.parameters, provenance(parameters)));
  describe(r, in, std::string(f.name), parameters.accuracy.time, out);
  out.notes.push_back(fmt::format(
      "{}: {}; weights {} B, inputs {} B, outputs {} B per element{}", f.name, f.description,
      f.weight_bytes, f.input_bytes, f.output_bytes,
      f.quantizes_input ? "; the time includes the kernel that quantizes the 16-bit input" : ""));
  out.notes.push_back(
      "the time is the kernel's in a steady loop with its weights in DRAM (not L2), as engines "
      "replay it in a CUDA graph; the power is the whole board's while it runs steadily, idle "
      "included");
  return out;
}

report::KernelReport kernel_attention(const KernelAttentionRequest& r) {
  kernel::AttentionShape shape;
  if (r.phase == "prefill") {
    shape.phase = kernel::AttentionPhase::kPrefill;
  } else if (r.phase == "decode") {
    shape.phase = kernel::AttentionPhase::kDecode;
  } else {
    throw InvalidInput(
        fmt::format("{} {}: expected prefill or decode", setting_name(r.names, "phase"), r.phase));
  }
  const bool decode = shape.phase == kernel::AttentionPhase::kDecode;
  check_dimension(r, "batch", r.batch);
  check_dimension(r, "seq", r.seq, decode ? 0 : 1);
  check_dimension(r, "heads", r.heads);
  check_dimension(r, "kv_heads", r.kv_heads);
  check_dimension(r, "head_dim", r.head_dim);
  check_dimension(r, "window", r.window, 0);
  const double queries = r.queries.value_or(decode ? 1 : r.seq);
  check_dimension(r, "queries", queries);
  if (!decode && queries > r.seq) {
    throw InvalidInput(fmt::format(
        "{} {}: a prefill chunk cannot be longer than the prompt ({} {:.0f}); give the new "
        "tokens of this chunk, at most the prompt",
        setting_name(r.names, "queries"), queries, setting_name(r.names, "seq"), r.seq));
  }
  if (std::fmod(r.heads, r.kv_heads) != 0) {
    throw InvalidInput(fmt::format("{} {:.0f}: must divide the {} {:.0f} (grouped-query heads)",
                                   setting_name(r.names, "kv_heads"), r.kv_heads,
                                   setting_name(r.names, "heads"), r.heads));
  }
  shape.batch = r.batch;
  shape.queries = queries;
  // Prefill: the prompt's tokens are the keys; decode: the context so far and the new ones.
  shape.keys = decode ? r.seq + queries : r.seq;
  shape.heads = r.heads;
  shape.kv_heads = r.kv_heads;
  shape.head_dim = r.head_dim;
  shape.window = r.window;
  kernel::AttentionFormat format;
  format.fp8_math = parse_fp8(r, "precision", r.precision);
  format.fp8_cache = parse_fp8(r, "kv_precision", r.kv_precision);
  const Resolved in = resolve(r);
  report::KernelReport out;
  try {
    out.estimate = kernel::predict_attention(in.device, shape, format, in.parameters, in.engine,
                                             r.clock_mhz.value_or(0));
  } catch (const InvalidInput& e) {
    throw InvalidInput(setting_name(r.names, "precision") + " " + r.precision + ": " + e.what());
  }
  out.kernel = "attention";
  out.description = fmt::format(
      "{} attention, {:.0f} sequence(s) x {:.0f} new token(s) over {:.0f} keys{}, {:.0f}/{:.0f} "
      "heads of {:.0f}, {} products, {} KV cache",
      kernel::to_string(shape.phase), shape.batch, shape.queries, shape.keys,
      shape.window > 0 ? fmt::format(" (window {:.0f})", shape.window) : "", shape.heads,
      shape.kv_heads, shape.head_dim, format.fp8_math ? "fp8" : "16-bit",
      format.fp8_cache ? "fp8" : "16-bit");
  out.shape = {{"batch", shape.batch},  {"queries", shape.queries},   {"keys", shape.keys},
               {"heads", shape.heads},  {"kv_heads", shape.kv_heads}, {"head_dim", shape.head_dim},
               {"window", shape.window}};
  out.tile_meaning =
      decode ? "query rows per KV head x keys per split" : "query rows x keys per block";
  out.peak_flop_per_s =
      *in.device.peak(format.fp8_math ? device::Precision::kFp8
                                      : kernel::units(in.device, kernel::GemmFormat::k16Bit));
  out.notes.push_back(fmt::format(
      "predicted by nnergy's kernel model ({}) with {}; {}",
      decode ? "KV-cache streaming over the DRAM bandwidth as far as the sequences x KV heads "
               "keep the SMs busy, the products and exponentials beside it"
             : "causal query tiles against their key blocks in waves over the SMs: the products "
               "on the tensor units, the softmax's exponentials on the SMs",
      out.estimate.parameters, provenance(in.parameters)));
  out.notes.push_back(
      "the time is one kernel in a steady loop inside a CUDA graph (queries, keys and values in "
      "DRAM); the power is the whole board's while it runs steadily, idle included");
  describe(r, in, format.name(), in.parameters.accuracy.attention, out);
  return out;
}

report::KernelReport kernel_moe(const KernelMoeRequest& r) {
  check_dimension(r, "tokens", r.tokens);
  check_dimension(r, "hidden", r.hidden);
  check_dimension(r, "inter", r.inter);
  check_dimension(r, "topk", r.topk);
  check_dimension(r, "experts", r.experts);
  check_dimension(r, "ep", r.ep);
  check_dimension(r, "tp", r.tp);
  if (r.topk > r.experts) {
    throw InvalidInput(fmt::format("{} {:.0f}: at most the {} {:.0f}",
                                   setting_name(r.names, "topk"), r.topk,
                                   setting_name(r.names, "experts"), r.experts));
  }
  if (std::fmod(r.experts, r.ep) != 0) {
    throw InvalidInput(fmt::format(
        "{} {:.0f}: must divide the {} {:.0f} (each GPU holds "
        "experts/ep of them)",
        setting_name(r.names, "ep"), r.ep, setting_name(r.names, "experts"), r.experts));
  }
  if (std::fmod(r.inter, r.tp) != 0) {
    throw InvalidInput(fmt::format("{} {:.0f}: must divide the {} {:.0f}",
                                   setting_name(r.names, "tp"), r.tp,
                                   setting_name(r.names, "inter"), r.inter));
  }
  const kernel::GemmFormat format = gemm_format(r, r.format);
  kernel::MoeShape shape;
  shape.tokens = r.tokens;
  shape.hidden = r.hidden;
  shape.inter = r.inter;
  shape.topk = r.topk;
  shape.experts = r.experts;
  shape.ep = r.ep;
  shape.tp = r.tp;
  shape.power_law_alpha = routing_alpha(r);
  const Resolved in = resolve(r);
  report::KernelReport out;
  try {
    out.estimate = kernel::predict_moe(in.device, shape, format, in.parameters, in.engine,
                                       r.clock_mhz.value_or(0));
  } catch (const InvalidInput& e) {
    throw InvalidInput(setting_name(r.names, "precision") + " " + r.format + ": " + e.what());
  }
  const kernel::GemmFormatInfo& f = kernel::info(format);
  double active = 0;
  double busiest = 0;
  for (const kernel::GemmGroup& g : kernel::expert_loads(shape)) {
    active += g.count;
    busiest = std::max(busiest, g.m);
  }
  out.kernel = "moe";
  out.description = fmt::format(
      "{} MoE layer, {:.0f} token(s) x top-{:.0f} of {:.0f} experts (hidden {:.0f}, expert "
      "intermediate {:.0f}{}{}), {} routing",
      f.name, r.tokens, r.topk, r.experts, r.hidden, r.inter,
      r.tp > 1 ? fmt::format(", tp {:.0f}", r.tp) : "",
      r.ep > 1 ? fmt::format(", ep {:.0f}: {:.0f} experts here", r.ep, r.experts / r.ep) : "",
      shape.power_law_alpha > 0 ? fmt::format("power-law (alpha {:.2f})", shape.power_law_alpha)
                                : std::string("balanced"));
  out.shape = {{"tokens", r.tokens}, {"hidden", r.hidden},       {"inter", r.inter},
               {"topk", r.topk},     {"experts", r.experts},     {"ep", r.ep},
               {"tp", r.tp},         {"active_experts", active}, {"busiest_expert_rows", busiest}};
  out.tile_meaning.clear();
  out.peak_flop_per_s = *in.device.peak(kernel::units(in.device, format));
  out.notes.push_back(fmt::format(
      "predicted by nnergy's kernel model (the {:.0f} active experts' up and down projections "
      "as two grouped GEMMs, each expert's rows padded to its tiles, all tiles in waves over the "
      "SMs, every active expert's weights read once; the tokens permuted to their experts and "
      "back) with {}; {}",
      active, out.estimate.parameters, provenance(in.parameters)));
  if (shape.power_law_alpha > 0)
    out.notes.push_back(
        "power-law routing: expert i gets a share of the choices proportional to i^-alpha (at "
        "most one per token); this GPU holds the most-chosen experts, the rank the others wait "
        "for");
  out.notes.push_back(
      "the time is the layer's routed experts in a steady loop inside a CUDA graph, without the "
      "router, the shared experts and the all-to-all of expert parallelism (nnergy kernel "
      "all-to-all); the power is the whole board's while it runs steadily, idle included");
  describe(r, in, std::string(f.name), in.parameters.accuracy.moe, out);
  return out;
}

report::KernelReport kernel_collective(const KernelCollectiveRequest& r) {
  const std::optional<kernel::CollectiveOp> op = kernel::parse_collective(r.op);
  if (!op) {
    throw InvalidInput(
        fmt::format("nnergy kernel {}: expected a kernel class: gemm, attention, moe, all-reduce, "
                    "all-gather, reduce-scatter or all-to-all",
                    r.op));
  }
  if (!(r.bytes >= 1 && r.bytes <= 1e13 && r.bytes == std::floor(r.bytes))) {
    throw InvalidInput(fmt::format("{} {}: expected a whole number of bytes from 1 to 1e13",
                                   setting_name(r.names, "bytes"), r.bytes));
  }
  const Resolved in = resolve(r);
  const kernel::CollectiveShape shape{*op, r.bytes, r.gpus};
  report::KernelReport out;
  try {
    out.estimate = kernel::predict_collective(in.device, shape, in.parameters, in.engine,
                                              r.clock_mhz.value_or(0));
  } catch (const InvalidInput& e) {
    throw InvalidInput(setting_with_value(r.names, "gpus", std::to_string(r.gpus)) + ": " +
                       e.what());
  }
  const kernel::CollectiveLink link = kernel::collective_link(in.device, r.gpus);
  out.kernel = std::string(kernel::to_string(*op));
  out.description = fmt::format("{} of {:.0f} bytes among {} GPUs over {}", out.kernel, r.bytes,
                                r.gpus, link.name);
  out.shape = {{"bytes", r.bytes}, {"gpus", static_cast<double>(r.gpus)}};
  out.tile_meaning.clear();
  out.notes.push_back(fmt::format(
      "predicted by nnergy's kernel model (a fixed time, one step per hop of the algorithm, and "
      "the bytes each GPU sends over {:.0f} GB/s one way) with {}; {}",
      link.byte_per_s / 1e9, out.estimate.parameters, provenance(in.parameters)));
  out.notes.push_back(
      "the size is the message as nccl-tests counts it (the all-reduce's tensor, the "
      "all-gather's gathered output, the reduce-scatter's input, one GPU's all-to-all buffer); "
      "the time is one collective inside a CUDA graph (the SM clock changes its power, not its "
      "time: the link bounds it); the power is one GPU's board power while it runs, idle "
      "included, and the energy one GPU's");
  describe(r, in, std::string(kernel::to_string(*op)), in.parameters.accuracy.collective, out);
  return out;
}

}  // namespace nnergy::api
