#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <string>

#include "bindings.h"
#include "nnergy/api/devices.h"
#include "nnergy/api/zoo.h"
#include "nnergy/report/devices_report.h"
#include "nnergy/report/zoo_report.h"

namespace nnergy::python {

namespace py = pybind11;
using namespace pybind11::literals;

void bind_catalog(py::module_& module) {
  module.def(
      "zoo_json",
      [](const std::string& data_dir) {
        api::ZooRequest r;
        r.data_dir = data_dir;
        const py::gil_scoped_release unlocked;
        return report::to_json(api::zoo(r)).dump();
      },
      "data_dir"_a = "", "api::zoo: the zoo's models as JSON text (`nnergy zoo --json`).");
  module.def(
      "devices_json",
      [](const std::string& device, const std::string& devices_file) {
        api::DevicesRequest r;
        r.device = device;
        r.devices_file = devices_file;
        r.names = SettingNames::kKeyword;
        r.command_line = "nnergy.devices()";
        return report::to_json(api::devices(r)).dump();
      },
      "device"_a = "", "devices_file"_a = "",
      "api::devices: the device catalog, or one device, as JSON text (`nnergy devices --json`).");
  module.def(
      "power_sources_json",
      [] {
        const py::gil_scoped_release unlocked;
        return report::to_json(api::detect_power_sources()).dump();
      },
      "api::detect_power_sources: the NVML GPUs and RAPL zones present here, as JSON text.");
}

}  // namespace nnergy::python
