#include "nnergy/api/serve.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "nnergy/core/data_directory.h"
#include "nnergy/core/error.h"
#include "nnergy/device/device_catalog.h"
#include "nnergy/llm/config_reader.h"
#include "nnergy/llm/model_catalog.h"
#include "nnergy/serve/deployment.h"
#include "nnergy/serve/engine.h"
#include "nnergy/serve/serve_calibration.h"

namespace nnergy::api {

namespace {

// The model is the command's positional MODEL; Python's keyword `model`.
std::string model_setting(SettingNames names) {
  return names == SettingNames::kFlag ? "MODEL" : "model";
}

// The host's share of a server's wall power per GPU, W, and the power supplies' efficiency:
// estimates (CPUs, memory, NICs, fans and switches of an 8-GPU HGX-class server ~1.2 kW under
// load; a PCIe server ~100 W per card).
constexpr double kHostWattsPerScaleUpGpu = 150;
constexpr double kHostWattsPerPcieGpu = 100;
constexpr double kPowerSupplyEfficiency = 0.94;

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) throw InvalidInput(path.string() + ": cannot be opened for reading");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

bool looks_like_a_file(const std::string& name) {
  std::error_code ec;
  return name.size() > 5 &&
         (name.substr(name.size() - 5) == ".json" || std::filesystem::is_regular_file(name, ec));
}

// The architecture and the weight format the name asks for.
struct ResolvedArchitecture {
  llm::Architecture model;
  std::optional<llm::WeightFormat> format;
  std::string note;
};

ResolvedArchitecture resolve_model(const ServeRequest& r, const llm::ModelCatalog& catalog) {
  ResolvedArchitecture out;
  std::error_code dir_error;
  if (std::filesystem::is_directory(r.model, dir_error)) {
    // A model directory (a checkpoint downloaded or saved with save_pretrained), as transformers
    // takes it: its config.json; a local directory wins over a catalog name, as there.
    const std::filesystem::path config = std::filesystem::path(r.model) / "config.json";
    if (!std::filesystem::is_regular_file(config, dir_error)) {
      throw InvalidInput(fmt::format(
          "{}: a directory without a config.json (expected a model directory as Hugging Face "
          "saves one, a config.json, or a model of `nnergy serve --list-models`)",
          r.model));
    }
    out.model = llm::parse_config(read_file(config.string()), config.string());
    out.model.source = "config file " + config.string();
    return out;
  }
  if (looks_like_a_file(r.model)) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(r.model, ec)) {
      throw InvalidInput(
          fmt::format("{}: no such file (expected a Hugging Face config.json or a "
                      "model of `nnergy serve --list-models`)",
                      r.model));
    }
    out.model = llm::parse_config(read_file(r.model), r.model);
    out.model.source = "config file " + r.model;
    return out;
  }
  const llm::ResolvedModel found = catalog.find(r.model, model_setting(r.names));
  out.model = found.model->architecture;
  if (found.weight_format) out.format = llm::parse_weight_format(*found.weight_format, "model");
  out.note = found.note;
  return out;
}

std::string layer_summary(const llm::Architecture& m) {
  std::string out;
  for (const llm::LayerKind& k : m.layers)
    out += fmt::format("{}{} × {}", out.empty() ? "" : "; ", k.count, k.name);
  return out;
}

double host_power_per_gpu(const device::DeviceSpec& d) {
  return (d.interconnect.scale_up_domain_gpus >= 4 ? kHostWattsPerScaleUpGpu
                                                   : kHostWattsPerPcieGpu);
}

// Scales a GPU-scope result to the node's wall power.
void to_node_scope(serve::ServeResult& r, double host_w_per_gpu, int gpus) {
  const double host_w = host_w_per_gpu * gpus;
  const double gpu_w = r.avg_power_w;
  const double node_w = (gpu_w + host_w) / kPowerSupplyEfficiency;
  const double factor = gpu_w > 0 ? node_w / gpu_w : 1;
  r.avg_power_w = node_w;
  r.avg_power_per_gpu_w = node_w / gpus;
  r.energy_per_output_token_j *= factor;
  r.energy_per_request_j *= factor;
  r.prefill.energy_j *= factor;
  r.decode.energy_j *= factor;
  r.shares = r.shares * factor;
}

}  // namespace

std::vector<report::ModelListing> list_models() {
  const llm::ModelCatalog catalog = llm::ModelCatalog::load_default();
  std::vector<report::ModelListing> out;
  for (const llm::CatalogModel& m : catalog.models()) {
    const llm::ParameterCount p = m.architecture.parameters();
    report::ModelListing l;
    l.id = m.id;
    l.family = m.family;
    l.model_type = m.architecture.model_type;
    l.total_b = static_cast<double>(p.total) / 1e9;
    l.active_b = static_cast<double>(p.active) / 1e9;
    l.published_total_b = m.architecture.published_total_b;
    l.published_active_b = m.architecture.published_active_b;
    l.context = m.architecture.max_context;
    l.weight_format = m.architecture.weight_format;
    l.layers = layer_summary(m.architecture);
    out.push_back(std::move(l));
  }
  return out;
}

PowerScope parse_power_scope(std::string_view name, std::string_view setting) {
  if (name == "gpu") return PowerScope::kGpu;
  if (name == "node") return PowerScope::kNode;
  throw InvalidInput(fmt::format(
      "{} {}: expected gpu (the GPUs' own power, as NVML reports it) or node (the servers' at "
      "the wall)",
      setting, name));
}

ServeCatalogs ServeCatalogs::load(const std::filesystem::path& devices_file) {
  const std::filesystem::path data_dir = data_directory();
  return {llm::ModelCatalog::load_default(),
          device::DeviceCatalog::load_with_user(data_dir, devices_file),
          serve::EngineCatalog::load(data_dir), serve::ServeCalibration::load(data_dir),
          kernel::KernelParameters::load(data_dir)};
}

report::ServeReport serve(const ServeRequest& r) {
  if (r.model.empty()) {
    throw InvalidInput(model_setting(r.names) +
                       ": expected a model (a Hugging Face id or a config.json path)");
  }
  return serve(r, ServeCatalogs::load(r.devices_file));
}

llm::Architecture serve_model(const ServeRequest& r, const ServeCatalogs& catalogs) {
  return resolve_model(r, catalogs.models).model;
}

report::ServeReport serve(const ServeRequest& r, const ServeCatalogs& catalogs) {
  ResolvedArchitecture resolved = resolve_model(r, catalogs.models);
  const llm::Architecture& model = resolved.model;
  const device::DeviceCatalog& devices = catalogs.devices;
  const device::DeviceSpec& listed =
      devices.find(r.device.value_or(kDefaultServeDevice), setting_name(r.names, "device"));
  const serve::EngineCatalog& engines = catalogs.engines;
  const serve::ServeCalibration& calibration = catalogs.calibration;
  // The device and engine with what `nnergy calibrate --serve` fitted for LLM serving.
  std::string calibration_note;
  const device::DeviceSpec device = calibration.apply(listed, &calibration_note);
  const serve::EngineProfile engine =
      calibration.apply(r.engine ? engines.find(*r.engine, setting_name(r.names, "engine"))
                                 : engines.default_engine());

  serve::DeploymentRequest dr;
  dr.model = &model;
  dr.device = &device;
  dr.catalog = &devices;
  dr.engine = &engine;
  dr.kernels = &catalogs.kernels;
  dr.kernel_power = calibration.kernel_power(listed);
  dr.weights = r.precision ? r.precision : resolved.format;
  dr.kv = r.kv_precision;
  dr.gpus = r.gpus;
  dr.tp = r.tp;
  dr.pp = r.pp;
  dr.ep = r.ep;
  dr.clock_mhz = r.clock_mhz;
  dr.sequence_tokens = r.input_tokens + r.output_tokens;
  dr.names = r.names;
  if (r.sweep_clocks && r.clock_mhz) {
    throw InvalidInput(fmt::format("{} and {}: choose one", setting_name(r.names, "clock_mhz"),
                                   setting_name(r.names, "sweep_clocks")));
  }
  serve::RunSettings settings;
  settings.workload = r.workload;
  settings.input_tokens = r.input_tokens;
  settings.output_tokens = r.output_tokens;
  settings.batch = r.max_batch;
  settings.max_batched_tokens = r.max_batched_tokens;
  settings.names = r.names;
  const serve::Deployment deployment = serve::settle_for_throughput(dr, settings);
  settings.rows = r.layers;

  const bool node = r.power_scope == PowerScope::kNode;
  const double host_w = host_power_per_gpu(device);
  const auto predict = [&](const serve::Deployment& d, const serve::RunSettings& s) {
    serve::ServeResult result = serve::run(d, s);
    if (node) to_node_scope(result, host_w, d.gpus);
    return result;
  };

  report::ServeReport report;
  report.result = predict(deployment, settings);
  report.model = model;
  report.parameters = model.parameters();
  report.device_id = device.id;
  report.device_name = device.name;
  report.device_memory_gib = device.memory_gib;
  report.engine_id = engine.id;
  report.engine_release = engine.release;
  report.engine_calibration = engine.calibration;
  report.gpus = deployment.gpus;
  report.tp = deployment.sharding.tp;
  report.pp = deployment.sharding.pp;
  report.ep = deployment.sharding.ep;
  report.replicas = deployment.replicas;
  report.precision = std::string(llm::to_string(deployment.weight_format));
  report.math = std::string(device::to_string(deployment.formats.weights.math));
  report.weight_only = deployment.formats.weights.weight_only;
  report.kv_precision = std::string(llm::to_string(deployment.kv_format));
  report.clock_mhz = deployment.point.clock_mhz;
  report.power_scope = node ? "node" : "gpu";
  report.host_power_per_gpu_w = node ? host_w : 0;
  report.workload = r.workload;
  report.input_tokens = r.input_tokens;
  report.output_tokens = r.output_tokens;
  report.weights_bytes_per_gpu = deployment.memory.weights;
  report.kv_budget_bytes_per_gpu = deployment.kv_budget_bytes;

  for (const int b : r.sweep_batch) {
    report::ServeSweepPoint p;
    p.batch = b;
    p.clock_mhz = deployment.point.clock_mhz;
    serve::RunSettings s = settings;
    s.batch = b;
    s.rows = false;
    if (b < 1) {
      throw InvalidInput(fmt::format("{} {}: expected positive batch sizes",
                                     setting_name(r.names, "sweep_batch"), b));
    }
    p.fits = b <= report.result.largest_batch;
    if (p.fits) p.result = predict(deployment, s);
    report.batch_sweep.push_back(std::move(p));
  }
  if (r.sweep_clocks) {
    serve::Deployment at_clock = deployment;
    for (const double clock : device.supported_clocks_mhz()) {
      at_clock.point.clock_mhz = clock;
      serve::RunSettings s = settings;
      s.rows = false;
      s.batch = static_cast<int>(report.result.batch);
      report::ServeSweepPoint p;
      p.batch = report.result.batch;
      p.clock_mhz = clock;
      p.result = predict(at_clock, s);
      report.clock_sweep.push_back(std::move(p));
    }
    std::size_t best = 0;
    for (std::size_t i = 1; i < report.clock_sweep.size(); ++i) {
      if (report.clock_sweep[i].result.energy_per_output_token_j <
          report.clock_sweep[best].result.energy_per_output_token_j)
        best = i;
    }
    report.energy_optimal_clock = best;
  }

  report.method = fmt::format(
      "all times, powers and energies are predicted, not measured: nnergy's kernel model for "
      "the matrix products (tiles and waves over the SMs, board power from their activity; {}) "
      "and the prefill's fused attention (causal query tiles in waves over the SMs; {}), and "
      "its analytical model (roofline time with the {}'s {} efficiencies, archline energy) "
      "for the other operations of a prefill chunk or decode step (decode attention reading "
      "the KV cache once per step; MLA and chunked local attention), collectives over {}, and "
      "the {} engine's parameter set ({}{})",
      catalogs.kernels.accuracy.time.empty() ? "its documented defaults, not fitted"
                                             : catalogs.kernels.accuracy.time,
      catalogs.kernels.accuracy.attention.empty() ? "its documented defaults, not fitted"
                                                  : catalogs.kernels.accuracy.attention,
      device.id, device.calibration.provenance.empty() ? "estimated" : "calibrated",
      device.interconnect.scale_up_name.empty() ? "PCIe" : device.interconnect.scale_up_name,
      engine.id, engine.release,
      engine.calibration.empty() ? "; documented defaults, host times estimated"
                                 : "; " + engine.calibration);
  if (!calibration_note.empty()) report.method += "; " + calibration_note;
  if (!calibration.accuracy.empty()) report.method += "; " + calibration.accuracy;
  if (!resolved.note.empty()) report.notes.push_back(resolved.note);
  if (!r.device) {
    report.notes.push_back(fmt::format("device {}: the default ({} to choose another)", device.id,
                                       setting_name(r.names, "device")));
  }
  report.notes.push_back(
      fmt::format("model configuration: {}", model.source.empty() ? model.id : model.source));
  for (const std::string& n : deployment.notes) report.notes.push_back(n);
  for (const std::string& n : report.result.notes) report.notes.push_back(n);
  if (r.workload == serve::Workload::kServing) {
    report.notes.push_back(
        "serving is the steady state of continuous batching: the running batch stays full, "
        "finished requests replaced at once; TTFT is a request's whole prompt under the "
        "engine's chunked-prefill schedule, behind the prompts that arrive with it, without "
        "time queued before admission");
  }
  if (node) {
    report.notes.push_back(fmt::format(
        "node scope: the GPUs' power plus an estimated host share of {:g} W per GPU (CPUs, "
        "memory, network, fans), divided by an estimated power-supply efficiency of {:.0f} %",
        host_w, kPowerSupplyEfficiency * 100));
  } else {
    report.notes.push_back(
        "GPU scope: the GPUs' power as NVML reports it (idle time included), not the server's "
        "at the wall (--power-scope node)");
  }

  report.context = RunContext::now(r.command_line);
  report.context.add("model", model.id)
      .add("device", {{"id", device.id}, {"name", device.name}, {"catalog", devices.sources()}})
      .add("engine", {{"id", engine.id}, {"release", engine.release}})
      .add("workload", std::string(serve::to_string(r.workload)))
      .add("input_tokens", r.input_tokens)
      .add("output_tokens", r.output_tokens)
      .add("precision", report.precision)
      .add("kv_precision", report.kv_precision)
      .add("gpus", report.gpus)
      .add("tp", report.tp)
      .add("pp", report.pp)
      .add("ep", report.ep)
      .add("clock_mhz", report.clock_mhz)
      .add("power_scope", report.power_scope);
  return report;
}

}  // namespace nnergy::api
