#include "nnergy/api/predict.h"

#include <fmt/format.h>

#include <memory>
#include <vector>

#include "nnergy/api/regressor_choice.h"
#include "nnergy/api/run_precision.h"
#include "nnergy/core/data_directory.h"
#include "nnergy/core/error.h"
#include "nnergy/device/device_catalog.h"
#include "nnergy/graph/folded_batch_norm.h"
#include "nnergy/graph/onnx_importer.h"
#include "nnergy/graph/zoo.h"
#include "nnergy/learn/learned_predictor.h"
#include "nnergy/learn/model_file.h"
#include "nnergy/network/clock_sweep.h"
#include "nnergy/network/memory_estimate.h"
#include "nnergy/network/power_limit.h"
#include "nnergy/network/time_evaluation.h"
#include "nnergy/predict/analytical_predictor.h"
#include "nnergy/report/quantity_format.h"

namespace nnergy::api {

namespace {

std::string name(const PredictRequest& r, std::string_view setting) {
  return setting_name(r.names, setting);
}

// "--batch 0" or "batch=0".
template <typename T>
std::string given(const PredictRequest& r, std::string_view setting, const T& value) {
  return setting_with_value(r.names, setting, fmt::format("{}", value));
}

graph::Optimizer settings_optimizer(const PredictRequest& r) {
  return r.optimizer.value_or(graph::Optimizer::kSgdMomentum);
}

// Checks what can be checked before anything is loaded.
void check_request(const PredictRequest& r) {
  if (r.batch && *r.batch <= 0)
    throw InvalidInput(given(r, "batch", *r.batch) + ": expected a positive integer");
  if (r.error.has_value() != r.alpha.has_value()) {
    throw InvalidInput(
        fmt::format("{} and {}: give both for the energy-precision ratio, or neither",
                    name(r, "error"), name(r, "alpha")));
  }
  if (r.power_limit_w && (r.clock_mhz || r.sweep_clocks)) {
    throw InvalidInput(
        fmt::format("{} and {}: choose one (under a power limit the model finds the clock)",
                    name(r, "power_limit_w"), name(r, r.clock_mhz ? "clock_mhz" : "sweep_clocks")));
  }
  if (r.host_launch_us && !(*r.host_launch_us >= 0 && *r.host_launch_us <= 1e6)) {
    throw InvalidInput(given(r, "host_launch_us", *r.host_launch_us) +
                       ": expected 0 to 1000000 microseconds");
  }
}

// Checks what depends on the device.
void check_against_device(const PredictRequest& r, const device::DeviceSpec& device,
                          device::Precision precision) {
  if (precision == device::Precision::kFp4) {
    throw InvalidInput(given(r, "precision", "fp4") +
                       ": predict computes an ONNX graph in fp32, tf32, fp16, bf16, fp64, fp8 or "
                       "int8; 4-bit weights (nvfp4, mxfp4, int4) are `nnergy serve`'s, for "
                       "language models");
  }
  if (!device.peak(precision)) {
    std::vector<std::string> have;
    for (const auto& [p, v] : device.peak_flop_per_s) have.emplace_back(device::to_string(p));
    throw InvalidInput(fmt::format("{}: {} has no {} peak in the catalog; accepted: {}",
                                   given(r, "precision", device::to_string(precision)), device.id,
                                   device::to_string(precision), join_with_commas(have)));
  }
  if (r.power_limit_w && !(*r.power_limit_w > device.idle_w && *r.power_limit_w <= device.tdp_w)) {
    throw InvalidInput(fmt::format(
        "{}: expected a limit above the {}'s idle power ({:g} W) and at most its TDP ({:g} W)",
        given(r, "power_limit_w", fmt::format("{:g}", *r.power_limit_w)), device.id, device.idle_w,
        device.tdp_w));
  }
  if (r.clock_mhz) device.check_clock(*r.clock_mhz, name(r, "clock_mhz"));
}

// The one-line refusal of a run whose estimated memory exceeds the device's.
std::string memory_exceeded_message(const PredictRequest& r, const graph::Network& net,
                                    const device::DeviceSpec& device,
                                    const network::MemoryEstimate& m, device::Precision precision) {
  std::string settings = fmt::format("{} {} {}", given(r, "batch", net.batch),
                                     given(r, "mode", graph::to_string(r.mode)),
                                     given(r, "precision", device::to_string(precision)));
  if (m.mode == graph::Mode::kTraining)
    settings += " " + given(r, "optimizer", graph::to_string(settings_optimizer(r)));
  std::string fits;
  if (m.largest_fitting_batch && *m.largest_fitting_batch > 0) {
    fits = fmt::format("the largest batch that fits is about {}", *m.largest_fitting_batch);
  } else {
    fits = fmt::format("no batch fits: the weights{} alone need {}",
                       m.mode == graph::Mode::kTraining ? ", gradients and optimizer state" : "",
                       report::format_binary_bytes(m.fixed_bytes));
  }
  return fmt::format(
      "{}: {} needs an estimated {} of device memory in {}, the {} has {} (exceeds by {}); {} "
      "({} predicts anyway)",
      settings, net.name, report::format_binary_bytes(m.peak_bytes), graph::to_string(m.mode),
      device.id, report::format_binary_bytes(m.device_memory_bytes),
      report::format_binary_bytes(m.peak_bytes - m.device_memory_bytes), fits,
      name(r, "ignore_memory"));
}

// True when `model_path` is a file of the zoo in `data_dir`, exported with BatchNorm kept
// (tools/export_zoo.py checks it), so that a folded-BatchNorm signature there is real.
bool is_zoo_file(const std::filesystem::path& model_path, const std::filesystem::path& data_dir) {
  std::error_code ec;
  return std::filesystem::equivalent(model_path.parent_path(), data_dir / "zoo", ec) && !ec;
}

std::shared_ptr<const learn::ModelFile> load_model_file(const PredictRequest& r) {
  if (r.predictor_file.empty()) return nullptr;
  if (!std::filesystem::is_regular_file(r.predictor_file)) {
    throw InvalidInput(fmt::format(
        "{}: expected `analytical` or a model file written by `nnergy train`; no such file",
        given(r, "predictor", r.predictor_file.string())));
  }
  const detail::RegressorChoice regressors(r.regressors);
  return std::make_shared<const learn::ModelFile>(
      learn::ModelFile::load(r.predictor_file, regressors.registry()));
}

}  // namespace

report::PredictionReport predict(const PredictRequest& r) {
  check_request(r);
  const std::filesystem::path data_dir = data_directory();
  const device::DeviceCatalog catalog =
      device::DeviceCatalog::load_with_user(data_dir, r.devices_file);
  // A model file is loaded first: its device is the default device.
  const std::shared_ptr<const learn::ModelFile> model = load_model_file(r);
  auto device = std::make_shared<const device::DeviceSpec>(catalog.find(
      r.device.value_or(model ? model->device().catalog_id : std::string(kDefaultPredictDevice)),
      name(r, "device")));

  graph::DimBindings bindings;
  bindings.batch = r.batch;
  bindings.named = r.dims;
  bindings.names = r.names;
  const std::filesystem::path model_path = graph::resolve_model(r.model, data_dir);
  auto net = std::make_shared<graph::Network>(graph::import_onnx(model_path, bindings));
  const detail::RunPrecision precision = detail::run_precision(r.precision, *net, r.names);
  check_against_device(r, *device, precision.precision);

  network::PredictionSettings settings;
  settings.mode = r.mode;
  settings.point.precision = precision.precision;
  settings.point.clock_mhz = r.clock_mhz.value_or(device->clock.boost_mhz);
  settings.optimizer = settings_optimizer(r);
  const device::CalibratedParameters* calibration =
      catalog.calibration() ? &*catalog.calibration() : nullptr;
  if (r.host && r.host_launch_us) {
    throw InvalidInput(fmt::format("{} and {}: choose one (a calibrated host, or the launch time)",
                                   name(r, "host"), name(r, "host_launch_us")));
  }
  const network::HostChoice host = network::choose_host(r.host, calibration, name(r, "host"));
  settings.host_launch_s =
      network::host_settings(r.host_launch_us ? *r.host_launch_us : host.launch_s * 1e6,
                             calibration)
          .host_launch_for(r.mode) *
      network::launch_share(r.runtime);
  if (r.whitelist) settings.whitelist = *r.whitelist;
  settings.tf32_convolutions = settings.point.precision == device::Precision::kFp32 &&
                               !r.strict_fp32 && device->peak(device::Precision::kTf32);

  net->cast_floating_tensors(device::storage_type(settings.point.precision));
  settings.batch = net->batch;  // the batch actually computed (re-bound or taken from the file)

  const network::CostedNetwork costed(*net, r.runtime);
  // Checked before any prediction, so that every path (one clock, a clock sweep, a power
  // limit) refuses the same runs.
  const network::MemoryEstimate memory =
      network::estimate_memory(costed, settings.mode, settings.optimizer, settings.batch,
                               network::gib_to_bytes(device->memory_gib));
  if (memory.exceeds_device_beyond_uncertainty() && !r.ignore_memory) {
    throw InvalidInput(memory_exceeded_message(r, *net, *device, memory, precision.precision));
  }

  const predict::AnalyticalPredictor analytical(*device);
  std::optional<learn::LearnedPredictor> learned;
  report::PredictionReport report;
  std::vector<double> clocks = {settings.point.clock_mhz};
  if (r.sweep_clocks)
    clocks = network::clocks_for_sweep(*device, r.sweep_step_mhz, name(r, "sweep_step_mhz"));
  if (model) {
    learned.emplace(model, *device, r.predictor_file.string());
    learned->check_applicable(settings.mode, settings.point.precision, r.names);
    report.sources = report::FigureSources{learned->time_source(), learned->power_source()};
    report.caveats = learned->caveats(*net, clocks);
  }
  report.caveats.insert(report.caveats.begin(), net->import_notes.begin(), net->import_notes.end());
  if (!precision.note.empty()) report.caveats.insert(report.caveats.begin(), precision.note);
  if (!r.host_launch_us && !host.name.empty()) report.caveats.push_back("host: " + host.source);
  if (settings.tf32_convolutions) {
    report.caveats.push_back(fmt::format(
        "fp32 as PyTorch runs it on the {}: convolutions in TF32 (cuDNN's default, "
        "torch.backends.cudnn.allow_tf32), matrix products in fp32; {} for fp32 everywhere",
        device->id, name(r, "strict_fp32")));
  }
  report.caveats.push_back(network::runtime_summary(r.runtime, costed.fusion()));
  const predict::OpPredictor& predictor =
      learned ? static_cast<const predict::OpPredictor&>(*learned) : analytical;
  report.memory = memory;
  if (r.optimizer && settings.mode == graph::Mode::kInference) {
    report.warnings.push_back(
        fmt::format("{}: an optimizer applies to training only; ignored in inference",
                    given(r, "optimizer", graph::to_string(*r.optimizer))));
  }
  if (settings.mode == graph::Mode::kTraining && !is_zoo_file(model_path, data_dir)) {
    const graph::FoldedBatchNormSignature folded = graph::detect_folded_batch_norm(*net);
    if (folded.matches) report.warnings.push_back(graph::folded_batch_norm_warning(folded));
  }
  if (r.power_limit_w) {
    report.power_limit = network::clock_under_power_limit(
        costed, predictor, settings, device->supported_clocks_mhz(), *r.power_limit_w);
    settings.point.clock_mhz = report.power_limit->clock_mhz;
  }
  report.prediction = network::predict_network(costed, predictor, settings);
  if (r.sweep_clocks) report.sweep = network::sweep_clocks(costed, predictor, settings, clocks);
  if (r.error) {
    report.energy_precision = report::EnergyPrecision{
        *r.error, *r.alpha,
        network::energy_precision_ratio(*r.error, *r.alpha,
                                        report.prediction.totals.energy_per_sample_j, r.names)};
  }
  report.context = RunContext::now(r.command_line);
  report.context.add("network", {{"name", net->name}, {"source", net->source}})
      .add("device", {{"id", device->id}, {"name", device->name}, {"catalog", catalog.sources()}})
      .add("predictor", report.prediction.predictor_name)
      .add("predictor_file",
           model ? nlohmann::ordered_json(r.predictor_file.string()) : nlohmann::ordered_json())
      .add("models", {{"time", report.sources ? report.sources->time : "analytical"},
                      {"power", report.sources ? report.sources->power : "analytical"},
                      {"energy", "time × power"}})
      .add("mode", graph::to_string(settings.mode))
      .add("batch", settings.batch)
      .add("precision", std::string(device::to_string(settings.point.precision)))
      .add("clock_mhz", settings.point.clock_mhz)
      .add("power_limit_w", r.power_limit_w ? nlohmann::ordered_json(*r.power_limit_w)
                                            : nlohmann::ordered_json(nullptr))
      .add("host_launch_s", settings.host_launch_s)
      .add("host",
           r.host_launch_us ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(host.name))
      .add("runtime", std::string(network::to_string(r.runtime)))
      .add("tf32_convolutions", settings.tf32_convolutions)
      .add("optimizer",
           settings.mode == graph::Mode::kTraining
               ? nlohmann::ordered_json(std::string(graph::to_string(settings.optimizer)))
               : nlohmann::ordered_json(nullptr));
  report.network = std::move(net);
  report.device = std::move(device);
  return report;
}

}  // namespace nnergy::api
