#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "bindings.h"
#include "nnergy/api/compare.h"
#include "nnergy/core/json_text.h"
#include "nnergy/report/comparison_report.h"
#include "nnergy/report/html_report.h"

namespace nnergy::python {

namespace py = pybind11;
using namespace pybind11::literals;

void bind_compare(py::module_& module) {
  module.def(
      "compare_json",
      [](const std::string& model, const std::vector<std::string>& devices,
         const std::vector<std::int64_t>& batches, const std::string& mode,
         const std::optional<std::string>& precision,
         const std::map<std::string, std::int64_t>& dims,
         const std::optional<double>& host_launch_us, const std::optional<std::string>& optimizer,
         const std::string& devices_file, const std::string& html,
         const std::string& command_line) {
        api::CompareRequest r;
        r.names = SettingNames::kKeyword;
        r.command_line = command_line;
        r.model = model;
        r.devices = devices;
        r.batches = batches;
        r.dims = dims;
        r.devices_file = devices_file;
        r.mode = graph::parse_mode(mode, "mode");
        if (precision) r.precision = device::parse_precision(*precision, "precision");
        r.host_launch_us = host_launch_us;
        if (optimizer) r.optimizer = graph::parse_optimizer(*optimizer, "optimizer");
        report::ComparisonReport result;
        {
          const py::gil_scoped_release unlocked;
          result = api::compare(r);
        }
        const nlohmann::ordered_json json = report::to_json(result);
        if (!html.empty()) {
          report::write_html(html, report::HtmlKind::kCompare, "nnergy compare: " + result.network,
                             json, "html");
        }
        return core::json_text(json, -1);
      },
      "model"_a, py::kw_only(), "devices"_a = std::vector<std::string>{},
      "batches"_a = std::vector<std::int64_t>{}, "mode"_a = "inference", "precision"_a = py::none(),
      "dims"_a = std::map<std::string, std::int64_t>{}, "host_launch_us"_a = py::none(),
      "optimizer"_a = py::none(), "devices_file"_a = "", "html"_a = "", "command_line"_a = "",
      "api::compare as the JSON document of `nnergy compare --json`; see nnergy.compare.");
}

}  // namespace nnergy::python
