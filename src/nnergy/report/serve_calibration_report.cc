#include "nnergy/report/serve_calibration_report.h"

#include <fmt/format.h>

#include <map>

#include "nnergy/report/text_table.h"

namespace nnergy::report {

namespace {

using json = nlohmann::ordered_json;

json figures_json(const calibration::ServingFigures& f) {
  json j = json::object();
  for (int k = 0; k < calibration::kServingQuantities; ++k) {
    const auto q = static_cast<calibration::ServingQuantity>(k);
    const auto v = calibration::figure(f, q);
    j[std::string(calibration::to_string(q))] = v ? json(*v) : json();
  }
  return j;
}

}  // namespace

std::string render_text(const ServeCalibrationReport& r) {
  std::string out = fmt::format(
      "nnergy calibrate --serve: {} published runs ({} records left out), {} iterations\n\n",
      r.fit.runs, r.fit.skipped, r.fit.iterations);
  TextTable g;
  for (const char* h : {"generation", "attention efficiency", "8-bit GEMM", "streaming efficiency",
                        "tensor flop energy", "kernel other power", "runs"})
    g.add_column(
        h, std::string(h) == "generation" ? TextTable::Align::kLeft : TextTable::Align::kRight);
  for (const auto& [name, fit] : r.fit.fitted.generations) {
    g.add_row(
        {name, fmt::format("{:.0f} %", fit.gemm_efficiency * 100),
         fit.gemm_efficiency_8bit ? fmt::format("{:.0f} %", *fit.gemm_efficiency_8bit * 100) : "",
         fmt::format("{:.0f} %", fit.memory_efficiency * 100),
         fmt::format("x{:.2f}", fit.tensor_energy_scale),
         fmt::format("x{:.2f}", fit.kernel_power_scale), std::to_string(fit.measurements)});
  }
  out += "Per GPU generation (of the datasheet peaks; energy relative to the archline default):\n" +
         g.render();
  std::string shared;
  for (const auto& [family, scale] : r.fit.fitted.memory_energy_scale)
    shared += fmt::format("{}DRAM energy per byte ({}) x{:.2f}", shared.empty() ? "" : "; ", family,
                          scale);
  if (r.fit.fitted.pcie_efficiency) {
    shared += fmt::format("{}PCIe collectives at {:.0f} % of the link", shared.empty() ? "" : "; ",
                          *r.fit.fitted.pcie_efficiency * 100);
  }
  if (!shared.empty()) out += "Shared: " + shared + "\n";
  TextTable e;
  for (const char* h : {"engine", "host per step", "per sequence", "host per kernel", "runs"})
    e.add_column(h,
                 std::string(h) == "engine" ? TextTable::Align::kLeft : TextTable::Align::kRight);
  for (const auto& [name, fit] : r.fit.fitted.engines) {
    e.add_row(
        {name, fmt::format("{:.2f} ms", fit.host_per_step_s * 1e3),
         fit.host_per_sequence_s > 0 ? fmt::format("{:.1f} us", fit.host_per_sequence_s * 1e6) : "",
         fit.host_per_kernel_s > 0 ? fmt::format("{:.1f} us", fit.host_per_kernel_s * 1e6) : "",
         std::to_string(fit.measurements)});
  }
  out += "\nPer engine:\n" + e.render();
  for (const calibration::ServingValidation& v : r.fit.validations) {
    TextTable t;
    for (const char* h : {"group", "quantity", "n", "MAPE", "median pred/meas", "within 20 %"})
      t.add_column(h, std::string(h) == "group" || std::string(h) == "quantity"
                          ? TextTable::Align::kLeft
                          : TextTable::Align::kRight);
    for (const calibration::ServingScore& s : v.scores) {
      t.add_row({s.group, std::string(calibration::to_string(s.quantity)), std::to_string(s.count),
                 fmt::format("{:.1f} %", s.mape * 100), fmt::format("{:.2f}", s.median_ratio),
                 fmt::format("{:.0f} %", s.within_20 * 100)});
    }
    out += fmt::format("\n{}:\n", v.scheme) + t.render();
  }
  std::map<std::string, int> reasons;
  for (const auto& s : r.skipped) ++reasons[s.reason];
  if (!reasons.empty()) {
    out += "\nRecords left out:\n";
    for (const auto& [reason, n] : reasons) out += fmt::format("  {} × {}\n", n, reason);
  }
  out += r.written.empty() ? "\n(dry run: nothing written)\n" : "\nwritten: " + r.written + "\n";
  return out;
}

json to_json(const ServeCalibrationReport& r) {
  json j;
  j["context"] = r.context.to_json();
  j["fitted"] = json::parse(r.fit.fitted.to_json_text());
  json validations = json::array();
  for (const calibration::ServingValidation& v : r.fit.validations) {
    json scores = json::array();
    for (const calibration::ServingScore& s : v.scores) {
      scores.push_back({{"group", s.group},
                        {"quantity", calibration::to_string(s.quantity)},
                        {"count", s.count},
                        {"mape", s.mape},
                        {"median_ratio", s.median_ratio},
                        {"within_20", s.within_20}});
    }
    json predictions = json::array();
    for (const calibration::ServingPrediction& p : v.predictions) {
      predictions.push_back({{"id", p.run.id},
                             {"source", p.run.source},
                             {"model", p.run.model_id},
                             {"device", p.run.device_id},
                             {"measured", figures_json(p.run.measured)},
                             {"predicted", figures_json(p.predicted)},
                             {"error", p.error}});
    }
    validations.push_back({{"scheme", v.scheme}, {"scores", scores}, {"predictions", predictions}});
  }
  j["validations"] = validations;
  json skipped = json::array();
  for (const auto& s : r.skipped) skipped.push_back({{"id", s.id}, {"reason", s.reason}});
  j["skipped"] = skipped;
  j["written"] = r.written;
  return j;
}

}  // namespace nnergy::report
