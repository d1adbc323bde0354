#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "bindings.h"
#include "nnergy/api/predict.h"
#include "nnergy/report/prediction_report.h"

namespace nnergy::python {

namespace py = pybind11;
using namespace pybind11::literals;

namespace {

struct PredictArguments {
  std::string model;
  std::optional<std::string> device;
  std::optional<std::int64_t> batch;
  std::string mode;
  std::optional<std::string> precision;
  std::map<std::string, std::int64_t> dims;
  std::optional<double> clock_mhz;
  std::optional<double> power_limit_w;
  std::optional<double> host_launch_us;
  std::optional<std::string> host;
  std::string runtime;
  bool strict_fp32 = false;
  bool sweep_clocks = false;
  std::optional<double> sweep_step_mhz;
  std::optional<std::string> optimizer;
  std::optional<std::string> whitelist;
  std::optional<double> error;
  std::optional<double> alpha;
  bool ignore_memory = false;
  std::string predictor_file;
  std::string devices_file;
  std::string command_line;
};

// The request, settings named as Python keywords. Parsing happens here, with the GIL held, so
// that its InvalidInput is translated like any other.
api::PredictRequest to_request(const PredictArguments& a) {
  api::PredictRequest r;
  r.names = SettingNames::kKeyword;
  r.command_line = a.command_line;
  r.model = a.model;
  r.device = a.device;
  r.predictor_file = a.predictor_file;
  r.devices_file = a.devices_file;
  r.mode = graph::parse_mode(a.mode, "mode");
  r.batch = a.batch;
  r.dims = a.dims;
  if (a.precision) r.precision = device::parse_precision(*a.precision, "precision");
  r.clock_mhz = a.clock_mhz;
  r.power_limit_w = a.power_limit_w;
  r.host_launch_us = a.host_launch_us;
  r.host = a.host;
  r.runtime = network::parse_runtime(a.runtime, "runtime");
  r.strict_fp32 = a.strict_fp32;
  r.sweep_clocks = a.sweep_clocks;
  r.sweep_step_mhz = a.sweep_step_mhz;
  if (a.optimizer) r.optimizer = graph::parse_optimizer(*a.optimizer, "optimizer");
  if (a.whitelist) r.whitelist = graph::Whitelist::parse(*a.whitelist, "whitelist");
  r.error = a.error;
  r.alpha = a.alpha;
  r.ignore_memory = a.ignore_memory;
  return r;  // regressors: null, the standard registry (regress/regressor.h)
}

}  // namespace

void bind_predict(py::module_& module) {
  py::class_<report::PredictionReport>(module, "PredictionReport",
                                       "The result of predict(): see report/prediction_report.h")
      .def(
          "to_json", [](const report::PredictionReport& r) { return report::to_json(r).dump(); },
          "The report as JSON text (the document of `nnergy predict --json`).")
      .def(
          "render_text",
          [](const report::PredictionReport& r, std::size_t top, bool sort_by_energy) {
            return report::render_text(r, {top, sort_by_energy});
          },
          "top"_a = 25, "sort_by_energy"_a = true,
          "The text report of `nnergy predict` (top: layers listed, 0 for all).")
      .def(
          "render_csv", [](const report::PredictionReport& r) { return report::render_csv(r); },
          "One CSV row per layer (per clock for a sweep), context as leading # lines.");

  module.def(
      "mode_name",
      [](const std::string& mode) { return graph::to_string(graph::parse_mode(mode, "mode")); },
      "mode"_a, "The canonical name of a mode, \"inference\" or \"training\" (graph::parse_mode).");
  module.def(
      "predict",
      [](const std::string& model, const std::optional<std::string>& device,
         const std::optional<std::int64_t>& batch, const std::string& mode,
         const std::optional<std::string>& precision,
         const std::map<std::string, std::int64_t>& dims, const std::optional<double>& clock_mhz,
         const std::optional<double>& power_limit_w, const std::optional<double>& host_launch_us,
         const std::optional<std::string>& host, const std::string& runtime, bool strict_fp32,
         bool sweep_clocks, const std::optional<double>& sweep_step_mhz,
         const std::optional<std::string>& optimizer, const std::optional<std::string>& whitelist,
         const std::optional<double>& error, const std::optional<double>& alpha, bool ignore_memory,
         const std::string& predictor_file, const std::string& devices_file,
         const std::string& command_line) {
        const api::PredictRequest request = to_request(
            {model,         device,         batch,          mode,        precision, dims,
             clock_mhz,     power_limit_w,  host_launch_us, host,        runtime,   strict_fp32,
             sweep_clocks,  sweep_step_mhz, optimizer,      whitelist,   error,     alpha,
             ignore_memory, predictor_file, devices_file,   command_line});
        const py::gil_scoped_release unlocked;
        return api::predict(request);
      },
      "model"_a, py::kw_only(), "device"_a = py::none(), "batch"_a = py::none(),
      "mode"_a = "inference", "precision"_a = py::none(),
      "dims"_a = std::map<std::string, std::int64_t>{}, "clock_mhz"_a = py::none(),
      "power_limit_w"_a = py::none(), "host_launch_us"_a = py::none(), "host"_a = py::none(),
      "runtime"_a = "eager", "strict_fp32"_a = false, "sweep_clocks"_a = false,
      "sweep_step_mhz"_a = py::none(), "optimizer"_a = py::none(), "whitelist"_a = py::none(),
      "error"_a = py::none(), "alpha"_a = py::none(), "ignore_memory"_a = false,
      "predictor_file"_a = "", "devices_file"_a = "", "command_line"_a = "",
      "api::predict: a zoo name or .onnx path on a device; see nnergy.predict for the "
      "arguments.");
}

}  // namespace nnergy::python
