#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <optional>
#include <string>
#include <vector>

#include "bindings.h"
#include "nnergy/api/serve.h"
#include "nnergy/core/json_text.h"
#include "nnergy/report/html_report.h"
#include "nnergy/report/serve_report.h"

namespace nnergy::python {

namespace py = pybind11;
using namespace pybind11::literals;

namespace {

// The keyword arguments of nnergy.serve, as the extension receives them.
struct ServeArgs {
  std::string model;
  std::optional<std::string> device;
  std::optional<int> gpus, tp, pp, ep;
  std::optional<std::string> precision, kv_precision, engine;
  std::string workload;
  double input_tokens = 0;
  double output_tokens = 0;
  std::optional<int> max_batch, max_batched_tokens;
  std::optional<double> clock_mhz;
  bool sweep_clocks = false;
  std::vector<int> sweep_batch;
  std::string power_scope;
  bool layers = false;
  std::string devices_file;
  std::string command_line;
};

api::ServeRequest to_request(const ServeArgs& a) {
  api::ServeRequest r;
  r.names = SettingNames::kKeyword;
  r.command_line = a.command_line;
  r.model = a.model;
  r.device = a.device;
  r.gpus = a.gpus;
  r.tp = a.tp;
  r.pp = a.pp;
  r.ep = a.ep;
  if (a.precision) r.precision = llm::parse_weight_format(*a.precision, "precision");
  if (a.kv_precision) r.kv_precision = llm::parse_weight_format(*a.kv_precision, "kv_precision");
  r.engine = a.engine;
  r.workload = serve::parse_workload(a.workload, "workload");
  r.input_tokens = a.input_tokens;
  r.output_tokens = a.output_tokens;
  r.max_batch = a.max_batch;
  r.max_batched_tokens = a.max_batched_tokens;
  r.clock_mhz = a.clock_mhz;
  r.sweep_clocks = a.sweep_clocks;
  r.sweep_batch = a.sweep_batch;
  r.power_scope = api::parse_power_scope(a.power_scope, "power_scope");
  r.layers = a.layers;
  r.devices_file = a.devices_file;
  return r;
}

}  // namespace

void bind_serve(py::module_& module) {
  py::class_<report::ServeReport>(module, "ServeReport",
                                  "The result of serve(): see report/serve_report.h")
      .def(
          "to_json",
          [](const report::ServeReport& r) { return core::json_text(report::to_json(r), -1); },
          "The report as JSON text (the document of `nnergy serve --json`).")
      .def(
          "render_text",
          [](const report::ServeReport& r, bool layers) { return report::render_text(r, layers); },
          "layers"_a = false, "The text report of `nnergy serve` (layers: one decode step's ops).")
      .def(
          "render_csv", [](const report::ServeReport& r) { return report::render_csv(r); },
          "One CSV row per sweep point (or the totals), context as leading # lines.")
      .def(
          "write_html",
          [](const report::ServeReport& r, const std::string& path) {
            report::write_html(path, report::HtmlKind::kServe,
                               "nnergy serve: " + r.model.id + " on " + std::to_string(r.gpus) +
                                   " × " + r.device_id,
                               report::to_json(r), "html");
          },
          "path"_a, "Writes the self-contained HTML report of `nnergy serve --html`.");

  module.def(
      "serve",
      [](const std::string& model, const std::optional<std::string>& device,
         const std::optional<int>& gpus, const std::optional<int>& tp, const std::optional<int>& pp,
         const std::optional<int>& ep, const std::optional<std::string>& precision,
         const std::optional<std::string>& kv_precision, const std::optional<std::string>& engine,
         const std::string& workload, double input_tokens, double output_tokens,
         const std::optional<int>& max_batch, const std::optional<int>& max_batched_tokens,
         const std::optional<double>& clock_mhz, bool sweep_clocks,
         const std::vector<int>& sweep_batch, const std::string& power_scope, bool layers,
         const std::string& devices_file, const std::string& command_line) {
        const api::ServeRequest request = to_request({model,        device,
                                                      gpus,         tp,
                                                      pp,           ep,
                                                      precision,    kv_precision,
                                                      engine,       workload,
                                                      input_tokens, output_tokens,
                                                      max_batch,    max_batched_tokens,
                                                      clock_mhz,    sweep_clocks,
                                                      sweep_batch,  power_scope,
                                                      layers,       devices_file,
                                                      command_line});
        const py::gil_scoped_release unlocked;
        return api::serve(request);
      },
      "model"_a, py::kw_only(), "device"_a = py::none(), "gpus"_a = py::none(), "tp"_a = py::none(),
      "pp"_a = py::none(), "ep"_a = py::none(), "precision"_a = py::none(),
      "kv_precision"_a = py::none(), "engine"_a = py::none(), "workload"_a = "serving",
      "input_tokens"_a, "output_tokens"_a, "max_batch"_a = py::none(),
      "max_batched_tokens"_a = py::none(), "clock_mhz"_a = py::none(), "sweep_clocks"_a = false,
      "sweep_batch"_a = std::vector<int>{}, "power_scope"_a = "gpu", "layers"_a = false,
      "devices_file"_a = "", "command_line"_a = "",
      "api::serve: time, power and energy per token of serving a language model; see "
      "nnergy.serve.");
  module.def(
      "list_models_json", [] { return core::json_text(report::to_json(api::list_models()), -1); },
      "The embedded language models as the JSON of `nnergy serve --list-models --json`.");
}

}  // namespace nnergy::python
