#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "bindings.h"
#include "nnergy/account/footprint.h"
#include "nnergy/api/account.h"
#include "nnergy/core/json_text.h"
#include "nnergy/report/accounting_report.h"

namespace nnergy::python {

namespace py = pybind11;
using namespace pybind11::literals;

namespace {

// Paths arrive as str (os.fspath): a std::filesystem::path argument would import pathlib when
// the module is imported, for its default values.
using Paths = std::vector<std::string>;

struct AccountArguments {
  Paths runs;
  Paths trace_files;
  Paths power_files;
  std::optional<double> offset_us;
  std::map<std::string, std::string> power_devices;
  bool interpolate = false;
  std::vector<std::string> summarize;
  bool default_rules = true;
  bool assess = false;
  std::size_t max_factor = 8;
  std::string json_file;
  std::string csv_file;
  std::string folded_file;
  std::string perfetto_file;
  std::string command_line;
};

api::AccountRequest to_request(const AccountArguments& a) {
  api::AccountRequest r;
  r.names = SettingNames::kKeyword;
  r.command_line = a.command_line;
  r.runs.assign(a.runs.begin(), a.runs.end());
  r.trace_files.assign(a.trace_files.begin(), a.trace_files.end());
  r.power_files.assign(a.power_files.begin(), a.power_files.end());
  r.offset_us = a.offset_us;
  r.power_devices = a.power_devices;
  r.interpolate = a.interpolate;
  for (const std::string& rule : a.summarize) {
    r.rules.push_back(account::parse_summarize_rule(rule, "summarize"));
  }
  r.default_rules = a.default_rules;
  r.assess = a.assess;
  r.max_factor = a.max_factor;
  r.json_file = a.json_file;
  r.csv_file = a.csv_file;
  r.folded_file = a.folded_file;
  r.perfetto_file = a.perfetto_file;
  return r;
}

}  // namespace

void bind_account(py::module_& module) {
  py::class_<report::AccountingReport>(module, "AccountingReport",
                                       "The result of account(): see report/accounting_report.h")
      .def(
          "to_json",
          [](const report::AccountingReport& r) { return core::json_text(report::to_json(r)); },
          "The document of `nnergy account --json` (one run's accounting, or every run's and "
          "the assessment) as JSON text.")
      .def(
          "render_text",
          [](const report::AccountingReport& r, std::size_t level, std::size_t top) {
            return report::render_text(r, {level, top, SettingNames::kKeyword});
          },
          "level"_a = 2, "top"_a = 25, "The text report of `nnergy account`.");

  module.def(
      "account",
      [](const Paths& runs, const Paths& trace_files, const Paths& power_files,
         const std::optional<double>& offset_us,
         const std::map<std::string, std::string>& power_devices, bool interpolate,
         const std::vector<std::string>& summarize, bool default_rules, bool assess,
         std::size_t max_factor, const std::string& json_file, const std::string& csv_file,
         const std::string& folded_file, const std::string& perfetto_file,
         const std::string& command_line) {
        const api::AccountRequest request =
            to_request({runs, trace_files, power_files, offset_us, power_devices, interpolate,
                        summarize, default_rules, assess, max_factor, json_file, csv_file,
                        folded_file, perfetto_file, command_line});
        const py::gil_scoped_release unlocked;
        return api::account(request);
      },
      "runs"_a = Paths{}, py::kw_only(), "trace_files"_a = Paths{}, "power_files"_a = Paths{},
      "offset_us"_a = py::none(), "power_devices"_a = std::map<std::string, std::string>{},
      "interpolate"_a = false, "summarize"_a = std::vector<std::string>{}, "default_rules"_a = true,
      "assess"_a = false, "max_factor"_a = 8, "json_file"_a = "", "csv_file"_a = "",
      "folded_file"_a = "", "perfetto_file"_a = "", "command_line"_a = "",
      "api::account; see nnergy.account for the arguments.");
}

}  // namespace nnergy::python
