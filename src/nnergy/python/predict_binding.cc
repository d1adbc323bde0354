#include <fmt/format.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <map>
#include <string>

#include "bindings.h"
#include "nnergy/api/predict.h"
#include "nnergy/api/predict_settings.h"
#include "nnergy/core/error.h"
#include "nnergy/report/prediction_report.h"

namespace nnergy::python {

namespace py = pybind11;
using namespace pybind11::literals;

namespace {

// A keyword argument's Python value as the setting's type; InvalidInput naming the keyword with
// the value's repr otherwise. None means "not given" and never reaches here.
api::SettingValue setting_value(api::SettingType type, const std::string& keyword,
                                const py::handle& value) {
  const bool is_bool = py::isinstance<py::bool_>(value);
  switch (type) {
    case api::SettingType::kSwitch:
      if (is_bool) return value.cast<bool>();
      break;
    case api::SettingType::kInteger:
      if (!is_bool && PyIndex_Check(value.ptr())) return value.cast<std::int64_t>();
      break;
    case api::SettingType::kNumber:
      if (!is_bool && (PyIndex_Check(value.ptr()) || PyFloat_Check(value.ptr()))) {
        return value.cast<double>();
      }
      break;
    case api::SettingType::kText:
      if (py::isinstance<py::str>(value)) return value.cast<std::string>();
      break;
    case api::SettingType::kBindings:
      if (py::isinstance<py::dict>(value)) {
        try {
          return value.cast<std::map<std::string, std::int64_t>>();
        } catch (const py::cast_error&) {
        }
      }
      break;
  }
  throw InvalidInput(fmt::format("{}={}: expected {}, found {}", keyword,
                                 py::repr(value).cast<std::string>(), api::describe(type),
                                 py::str(value.get_type().attr("__name__")).cast<std::string>()));
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
      [](const std::string& model, const std::string& command_line, const py::kwargs& settings) {
        // The request, settings named as Python keywords. Parsing happens here, with the GIL
        // held, so that its InvalidInput is translated like any other.
        api::PredictRequest request;
        request.names = SettingNames::kKeyword;
        request.command_line = command_line;
        request.model = model;
        for (const auto& [key, value] : settings) {
          if (value.is_none()) continue;
          const std::string keyword = key.cast<std::string>();
          const auto& setting = api::predict_settings().get(keyword);
          api::apply_predict_setting(request, keyword, setting_value(setting.type, keyword, value));
        }
        // regressors: null, the standard registry (regress/regressor.h)
        const py::gil_scoped_release unlocked;
        return api::predict(request);
      },
      "model"_a, py::kw_only(), "command_line"_a = "",
      "api::predict: a zoo name or .onnx path on a device; the settings are keyword arguments "
      "(predict_settings()); see nnergy.predict.");
  module.def(
      "predict_settings",
      [] {
        py::list out;
        for (const auto& entry : api::predict_settings().entries()) {
          out.append(py::dict("keyword"_a = entry.name, "flag"_a = entry.value.flag,
                              "type"_a = std::string(api::describe(entry.value.type)),
                              "switch"_a = entry.value.type == api::SettingType::kSwitch,
                              "default"_a = entry.value.default_text, "help"_a = entry.summary));
        }
        return out;
      },
      "The settings of predict, in order: keyword, flag, type, switch, default (as help shows "
      "it, '' for none), help (api/predict_settings.h).");
}

}  // namespace nnergy::python
