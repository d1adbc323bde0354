#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "bindings.h"
#include "nnergy/api/power_meter.h"
#include "nnergy/report/monitor_report.h"

namespace nnergy::python {

namespace py = pybind11;
using namespace pybind11::literals;

namespace {

measure::WindowOptions window_options(double sigma_filter, bool exclude_off_clock,
                                      bool exclude_throttled,
                                      const std::optional<std::int64_t>& iterations) {
  measure::WindowOptions o;
  o.sigma_filter = sigma_filter;
  o.exclude_off_clock = exclude_off_clock;
  o.exclude_throttled = exclude_throttled;
  o.iterations = iterations;
  return o;
}

// A closed window as JSON text (report::to_json), with the window's name.
std::string window_json(const measure::Measurement& m, const std::string& name) {
  nlohmann::ordered_json j;
  j["name"] = name;
  j.update(report::to_json(m));
  return j.dump();
}

}  // namespace

void bind_power_meter(py::module_& module) {
  py::class_<api::PowerMeter>(module, "PowerMeter",
                              "api::PowerMeter: samples power sources from construction until "
                              "stop(); begin()/end() open and close measurement windows, which "
                              "may nest and overlap, from any thread.")
      .def(py::init([](const std::vector<std::string>& sources, double interval_ms,
                       const std::string& trace_file, const std::string& command_line) {
             api::PowerMeterRequest r;
             r.sources = sources;
             r.interval_ms = interval_ms;
             r.trace_file = trace_file;
             r.command_line = command_line;
             r.names = SettingNames::kKeyword;
             return std::make_unique<api::PowerMeter>(r);
           }),
           "sources"_a = std::vector<std::string>{}, "interval_ms"_a = 20.0, py::kw_only(),
           "trace_file"_a = "", "command_line"_a = "")
      .def("begin", &api::PowerMeter::begin, "name"_a = "",
           "Opens a window now; returns its handle.")
      .def(
          "end",
          [](api::PowerMeter& meter, std::size_t handle, double sigma_filter,
             bool exclude_off_clock, bool exclude_throttled,
             const std::optional<std::int64_t>& iterations) {
            const measure::WindowOptions o =
                window_options(sigma_filter, exclude_off_clock, exclude_throttled, iterations);
            const std::string name = meter.name_of(handle);
            measure::Measurement m;
            {
              const py::gil_scoped_release unlocked;
              m = meter.end(handle, o);
            }
            return window_json(m, name);
          },
          "handle"_a, py::kw_only(), "sigma_filter"_a = 3.0, "exclude_off_clock"_a = false,
          "exclude_throttled"_a = false, "iterations"_a = py::none(),
          "Closes window `handle` now; returns its measurement as JSON text.")
      .def(
          "end_named",
          [](api::PowerMeter& meter, const std::string& name, double sigma_filter,
             bool exclude_off_clock, bool exclude_throttled,
             const std::optional<std::int64_t>& iterations) {
            const measure::WindowOptions o =
                window_options(sigma_filter, exclude_off_clock, exclude_throttled, iterations);
            measure::Measurement m;
            {
              const py::gil_scoped_release unlocked;
              m = meter.end_named(name, o);
            }
            return window_json(m, name);
          },
          "name"_a, py::kw_only(), "sigma_filter"_a = 3.0, "exclude_off_clock"_a = false,
          "exclude_throttled"_a = false, "iterations"_a = py::none(),
          "Closes the latest open window named `name`; returns its measurement as JSON text.")
      .def(
          "stop",
          [](api::PowerMeter& meter) {
            const py::gil_scoped_release unlocked;
            meter.stop();
          },
          "Takes a last sample, stops sampling and completes the trace file (idempotent).")
      .def("source_ids",
           [](const api::PowerMeter& meter) {
             std::vector<std::string> ids;
             for (const measure::SourceInfo& s : meter.sources()) ids.push_back(s.id);
             return ids;
           })
      .def("unavailable",
           [](const api::PowerMeter& meter) {
             std::vector<std::pair<std::string, std::string>> out;
             for (const measure::Unavailable& u : meter.unavailable()) {
               out.emplace_back(u.source, u.reason);
             }
             return out;
           })
      .def("warnings", &api::PowerMeter::warnings)
      .def_property_readonly("interval_ms", &api::PowerMeter::interval_ms)
      .def("now_s", &api::PowerMeter::now_s)
      .def("epoch_offset_s", &api::PowerMeter::epoch_offset_s)
      .def("sampler_cpu_time_s", &api::PowerMeter::sampler_cpu_time_s);
}

}  // namespace nnergy::python
