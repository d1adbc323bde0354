// `nnergy predict`: per-layer and network time, power and energy of a model on a device.
#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "command.h"
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
#include "nnergy/report/prediction_report.h"
#include "nnergy/report/quantity_format.h"

namespace nnergy::cli {

namespace {

constexpr const char* kDefaultDevice = "a100-40gb";

struct PredictOptions {
  std::string model;
  std::optional<std::string> device;
  std::string predictor = "analytical";
  std::string devices_file;
  std::string mode = "inference";
  std::optional<std::int64_t> batch;
  std::vector<std::string> dims;
  std::optional<double> clock_mhz;
  std::optional<double> power_limit_w;
  std::optional<double> host_launch_us;  ///< default: the calibrated eager-PyTorch value
  bool sweep = false;
  std::optional<double> sweep_step_mhz;
  std::string precision = "fp32";
  std::string optimizer = "sgd-momentum";
  std::string whitelist;
  std::size_t top = 25;
  std::string order = "energy";
  std::optional<double> error;
  std::optional<double> alpha;
  bool json = false;
  bool csv = false;
  bool ignore_memory = false;
};

std::map<std::string, std::int64_t> parse_dims(const std::vector<std::string>& dims) {
  std::map<std::string, std::int64_t> named;
  for (const std::string& item : dims) {
    const auto eq = item.find('=');
    std::size_t used = 0;
    std::int64_t value = 0;
    bool ok = eq != std::string::npos && eq > 0 && eq + 1 < item.size();
    if (ok) {
      try {
        value = std::stoll(item.substr(eq + 1), &used);
      } catch (const std::exception&) {
        ok = false;
      }
      ok = ok && used == item.size() - eq - 1;
    }
    if (!ok) throw InvalidInput("--dim " + item + ": expected NAME=VALUE with an integer VALUE");
    named[item.substr(0, eq)] = value;
  }
  return named;
}

// Clocks for a sweep: the device's supported clocks, thinned to at most ~100 points unless a
// step is given; the boost clock is always included.
std::vector<double> sweep_clocks_for(const device::DeviceSpec& device, std::optional<double> step) {
  if (step && !(*step > 0))
    throw InvalidInput(fmt::format("--sweep-step-mhz {:g}: expected > 0", *step));
  const std::vector<double> supported = device.supported_clocks_mhz();
  const double wanted = step ? *step : device.clock.step_mhz;
  const double range = device.clock.boost_mhz - device.clock.min_mhz;
  const double stride_mhz = std::max(wanted, range / 100.0);
  std::vector<double> clocks;
  double next = device.clock.min_mhz;
  for (double f : supported) {
    if (f + 1e-9 >= next) {
      clocks.push_back(f);
      next = f + stride_mhz;
    }
  }
  if (clocks.back() != device.clock.boost_mhz) clocks.push_back(device.clock.boost_mhz);
  return clocks;
}

// The one-line refusal of a run whose estimated memory exceeds the device's.
std::string memory_exceeded_message(const PredictOptions& o, const graph::Network& net,
                                    const device::DeviceSpec& device,
                                    const network::MemoryEstimate& m) {
  std::string flags =
      fmt::format("--batch {} --mode {} --precision {}", net.batch, o.mode, o.precision);
  if (m.mode == predict::Mode::kTraining) flags += " --optimizer " + o.optimizer;
  std::string fits;
  if (m.largest_fitting_batch && *m.largest_fitting_batch > 0) {
    fits = fmt::format("the largest batch that fits is about {}", *m.largest_fitting_batch);
  } else {
    fits = fmt::format("no batch fits: the weights{} alone need {}",
                       m.mode == predict::Mode::kTraining ? ", gradients and optimizer state" : "",
                       report::format_binary_bytes(m.fixed_bytes));
  }
  return fmt::format(
      "{}: {} needs an estimated {} of device memory in {}, the {} has {} (exceeds by {}); {} "
      "(--ignore-memory predicts anyway)",
      flags, net.name, report::format_binary_bytes(m.peak_bytes), predict::to_string(m.mode),
      device.id, report::format_binary_bytes(m.device_memory_bytes),
      report::format_binary_bytes(m.peak_bytes - m.device_memory_bytes), fits);
}

// True when `model_path` is a file of the zoo in `data_dir`, exported with BatchNorm kept
// (tools/export_zoo.py checks it), so that a folded-BatchNorm signature there is real.
bool is_zoo_file(const std::filesystem::path& model_path, const std::filesystem::path& data_dir) {
  std::error_code ec;
  return std::filesystem::equivalent(model_path.parent_path(), data_dir / "zoo", ec) && !ec;
}

std::string run_predict(const PredictOptions& o, const std::string& command_line) {
  if (o.batch && *o.batch <= 0)
    throw InvalidInput(fmt::format("--batch {}: expected a positive integer", *o.batch));
  if (o.json && o.csv) throw InvalidInput("--json and --csv: choose one output format");
  if (o.error.has_value() != o.alpha.has_value()) {
    throw InvalidInput("--error and --alpha: give both for the energy-precision ratio, or neither");
  }
  if (o.order != "energy" && o.order != "network") {
    throw InvalidInput("--order " + o.order + ": accepted: energy, network");
  }
  const std::filesystem::path data_dir = data_directory();
  device::DeviceCatalog catalog = device::DeviceCatalog::load_default(data_dir);
  if (!o.devices_file.empty()) catalog.merge(device::DeviceCatalog::load(o.devices_file));
  // A model file is loaded first: its device is the default device.
  std::shared_ptr<const learn::ModelFile> model;
  if (o.predictor != "analytical") {
    if (!std::filesystem::is_regular_file(o.predictor)) {
      throw InvalidInput(fmt::format(
          "--predictor {}: expected `analytical` or a model file written by `nnergy train`; no "
          "such file",
          o.predictor));
    }
    model = std::make_shared<const learn::ModelFile>(
        learn::ModelFile::load(o.predictor, available_regressors()));
  }
  const device::DeviceSpec& device = catalog.find(
      o.device.value_or(model ? model->device().catalog_id : std::string(kDefaultDevice)));

  network::PredictionSettings settings;
  settings.mode = predict::parse_mode(o.mode, "--mode");
  settings.point.precision = device::parse_precision(o.precision, "--precision");
  if (!device.peak(settings.point.precision)) {
    std::vector<std::string> have;
    for (const auto& [p, v] : device.peak_flop_per_s) have.emplace_back(device::to_string(p));
    throw InvalidInput(fmt::format("--precision {}: {} has no {} peak in the catalog; accepted: {}",
                                   o.precision, device.id, o.precision, join_with_commas(have)));
  }
  if (o.power_limit_w) {
    if (o.clock_mhz || o.sweep) {
      throw InvalidInput(fmt::format(
          "--power-limit-w and {}: choose one (under a power limit the model finds the clock)",
          o.clock_mhz ? "--clock-mhz" : "--sweep-clocks"));
    }
    if (!(*o.power_limit_w > device.idle_w && *o.power_limit_w <= device.tdp_w)) {
      throw InvalidInput(fmt::format(
          "--power-limit-w {:g}: expected a limit above the {}'s idle power ({:g} W) and at most "
          "its TDP ({:g} W)",
          *o.power_limit_w, device.id, device.idle_w, device.tdp_w));
    }
  }
  settings.point.clock_mhz = o.clock_mhz.value_or(device.clock.boost_mhz);
  device.check_clock(settings.point.clock_mhz, "--clock-mhz");
  settings.optimizer = graph::parse_optimizer(o.optimizer, "--optimizer");
  if (o.host_launch_us && !(*o.host_launch_us >= 0 && *o.host_launch_us <= 1e6)) {
    throw InvalidInput(
        fmt::format("--host-launch-us {}: expected 0 to 1000000 microseconds", *o.host_launch_us));
  }
  settings.host_launch_s =
      o.host_launch_us ? *o.host_launch_us * 1e-6
                       : (catalog.calibration() ? catalog.calibration()->host_launch_s : 0.0);
  if (!o.whitelist.empty())
    settings.whitelist = graph::Whitelist::parse(o.whitelist, "--whitelist");

  graph::DimBindings bindings;
  bindings.batch = o.batch;
  bindings.named = parse_dims(o.dims);
  const std::filesystem::path model_path = graph::resolve_model(o.model, data_dir);
  graph::Network net = graph::import_onnx(model_path, bindings);
  net.cast_floating_tensors(predict::storage_type(settings.point.precision));
  settings.batch = net.batch;  // the batch actually computed (re-bound or taken from the file)

  const network::CostedNetwork costed(net);
  // Checked before any prediction, so that every path (one clock, --clock-mhz, --sweep-clocks)
  // refuses the same runs.
  const network::MemoryEstimate memory =
      network::estimate_memory(costed, settings.mode, settings.optimizer, settings.batch,
                               network::gib_to_bytes(device.memory_gib));
  if (memory.exceeds_device() && !o.ignore_memory) {
    throw InvalidInput(memory_exceeded_message(o, net, device, memory));
  }
  const predict::AnalyticalPredictor analytical(device);
  std::optional<learn::LearnedPredictor> learned;
  report::PredictionReport report;
  std::vector<double> clocks = {settings.point.clock_mhz};
  if (o.sweep) clocks = sweep_clocks_for(device, o.sweep_step_mhz);
  if (model) {
    learned.emplace(model, device, o.predictor);
    learned->check_applicable(settings.mode, settings.point.precision);
    learned->precompute(net, settings.mode, settings.point.precision, clocks);
    report.sources = report::FigureSources{learned->time_source(), learned->power_source()};
    report.caveats = learned->caveats(net, clocks);
  }
  report.caveats.insert(report.caveats.begin(), net.import_notes.begin(), net.import_notes.end());
  const predict::OpPredictor& predictor =
      learned ? static_cast<const predict::OpPredictor&>(*learned) : analytical;
  report.network = &net;
  report.device = &device;
  report.memory = memory;
  if (settings.mode == predict::Mode::kTraining && !is_zoo_file(model_path, data_dir)) {
    const graph::FoldedBatchNormSignature folded = graph::detect_folded_batch_norm(net);
    if (folded.matches) report.warnings.push_back(graph::folded_batch_norm_warning(folded));
  }
  if (o.power_limit_w) {
    report.power_limit = network::clock_under_power_limit(
        costed, predictor, analytical, settings, device.supported_clocks_mhz(), *o.power_limit_w);
    settings.point.clock_mhz = report.power_limit->clock_mhz;
  }
  report.prediction = network::predict_network(costed, predictor, analytical, settings);
  if (o.sweep)
    report.sweep = network::sweep_clocks(costed, predictor, analytical, settings, clocks);
  if (o.error) {
    report.energy_precision = report::EnergyPrecision{
        *o.error, *o.alpha,
        network::energy_precision_ratio(*o.error, *o.alpha,
                                        report.prediction.totals.energy_per_sample_j)};
  }
  report.context = RunContext::now(command_line);
  report.context.add("network", {{"name", net.name}, {"source", net.source}})
      .add("device", {{"id", device.id}, {"name", device.name}, {"catalog", catalog.sources()}})
      .add("predictor", report.prediction.predictor_name)
      .add("predictor_file", model ? nlohmann::ordered_json(o.predictor) : nullptr)
      .add("models", {{"time", report.sources ? report.sources->time : "analytical"},
                      {"power", report.sources ? report.sources->power : "analytical"},
                      {"energy", "time × power"}})
      .add("mode", predict::to_string(settings.mode))
      .add("batch", settings.batch)
      .add("precision", std::string(device::to_string(settings.point.precision)))
      .add("clock_mhz", settings.point.clock_mhz)
      .add("power_limit_w", o.power_limit_w ? nlohmann::ordered_json(*o.power_limit_w)
                                            : nlohmann::ordered_json(nullptr))
      .add("host_launch_s", settings.host_launch_s)
      .add("optimizer",
           settings.mode == predict::Mode::kTraining
               ? nlohmann::ordered_json(std::string(graph::to_string(settings.optimizer)))
               : nlohmann::ordered_json(nullptr));
  if (o.json) return report::to_json(report).dump(2) + "\n";
  if (o.csv) return report::render_csv(report);
  return report::render_text(report, {o.top, o.order == "energy"});
}

}  // namespace

void add_predict_command(CLI::App& app, CommandRun* selected, const std::string& command_line) {
  auto options = std::make_shared<PredictOptions>();
  CLI::App* cmd = app.add_subcommand(
      "predict",
      "Predict per-layer and total time, power and energy of a network on a GPU from its "
      "architecture (analytical roofline + archline model, or a learned model file)");
  cmd->add_option("model", options->model, "zoo name (see `nnergy zoo`) or path to an .onnx file")
      ->required();
  cmd->add_option("--device", options->device,
                  fmt::format("device id or alias (see `nnergy devices`); default: the model "
                              "file's device with --predictor FILE, else {}",
                              kDefaultDevice));
  cmd->add_option("--predictor", options->predictor,
                  "analytical, or a model file written by `nnergy train` (.nnp)")
      ->capture_default_str();
  cmd->add_option("--devices-file", options->devices_file,
                  "extra device catalog (JSON) whose devices replace or add to the built-in ones");
  cmd->add_option("--mode", options->mode, "inference or training")->capture_default_str();
  cmd->add_option("--host-launch-us", options->host_launch_us,
                  "host CPU time to launch one kernel in an eager framework, us; the iteration "
                  "is the critical path of host and GPU (0: the host is never the bottleneck); "
                  "default: the value `nnergy calibrate` fitted on eager PyTorch measurements "
                  "(`nnergy devices` shows it)");
  cmd->add_option("--batch", options->batch,
                  "samples per iteration (binds the batch dimension; re-binds a batch fixed in "
                  "the file); default: the file's fixed batch, else 1");
  cmd->add_option("--dim", options->dims,
                  "bind another symbolic dimension: NAME=VALUE (repeatable)");
  cmd->add_option("--clock-mhz", options->clock_mhz, "core clock in MHz (default: boost clock)");
  cmd->add_option("--power-limit-w", options->power_limit_w,
                  "predict under a lowered board power limit, W (as set with nvidia-smi -pl): "
                  "the clock is the highest at which the predicted average power stays within it");
  cmd->add_flag("--sweep-clocks", options->sweep,
                "predict over the device's clocks and name the energy- and EDP-optimal ones");
  cmd->add_option("--sweep-step-mhz", options->sweep_step_mhz,
                  "clock step of the sweep in MHz (default: the device's, at most ~100 points)");
  cmd->add_option("--precision", options->precision, "fp32, tf32, fp16, bf16 or fp64")
      ->capture_default_str();
  cmd->add_option("--optimizer", options->optimizer, "training: sgd, sgd-momentum, adam or adamw")
      ->capture_default_str();
  cmd->add_option("--whitelist", options->whitelist,
                  "comma-separated compute-relevant ONNX op types (default: the standard list); "
                  "others are flagged, still predicted");
  cmd->add_option("--top", options->top, "layers listed in the text table (0: all)")
      ->capture_default_str();
  cmd->add_option("--order", options->order, "text table order: energy or network")
      ->capture_default_str();
  cmd->add_option(
      "--error", options->error,
      "classification error (fraction) for the energy-precision ratio M = error^alpha * EPI");
  cmd->add_option("--alpha", options->alpha, "exponent alpha of the energy-precision ratio");
  cmd->add_flag("--json", options->json, "write JSON instead of text");
  cmd->add_flag("--csv", options->csv, "write CSV (per layer, or per clock with --sweep-clocks)");
  cmd->add_flag("--ignore-memory", options->ignore_memory,
                "predict even when the estimated peak device memory exceeds the device's "
                "(the estimate is an approximation; activation checkpointing or in-place ops "
                "need less)");
  cmd->callback([options, selected, command_line] {
    *selected = [options, command_line] {
      return CommandResult{run_predict(*options, command_line), 0};
    };
  });
}

}  // namespace nnergy::cli
