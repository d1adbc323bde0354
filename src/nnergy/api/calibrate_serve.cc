#include "nnergy/api/calibrate_serve.h"

#include <fmt/format.h>

#include <map>

#include "nnergy/calibration/published_serving.h"
#include "nnergy/core/atomic_file.h"
#include "nnergy/core/data_directory.h"
#include "nnergy/device/device_catalog.h"
#include "nnergy/llm/model_catalog.h"
#include "nnergy/serve/engine.h"

namespace nnergy::api {

namespace {

// "leave-one-gpu-out MAPE: J/token 14 %, tokens/s 17 %, ITL 19 %, power 8 % (n = ...)".
std::string accuracy_line(const calibration::ServeFitReport& fit) {
  std::string out;
  for (const calibration::ServingValidation& v : fit.validations) {
    if (v.scheme != "leave-one-gpu-out" && v.scheme != "leave-one-source-out" &&
        v.scheme != "leave-one-model-out") {
      continue;
    }
    std::string parts;
    for (const calibration::ServingScore& s : v.scores) {
      if (s.group != "all") continue;
      static const std::map<calibration::ServingQuantity, const char*> kShort = {
          {calibration::ServingQuantity::kEnergyPerOutputToken, "J/token"},
          {calibration::ServingQuantity::kTokensPerS, "tokens/s"},
          {calibration::ServingQuantity::kTimePerOutputToken, "ITL"},
          {calibration::ServingQuantity::kAvgPower, "power"}};
      parts += fmt::format("{}{} {:.0f} %", parts.empty() ? "" : ", ", kShort.at(s.quantity),
                           s.mape * 100);
    }
    out += fmt::format("{}{} MAPE {}", out.empty() ? "" : "; ", v.scheme, parts);
  }
  return out.empty() ? out : "out of sample on published serving measurements: " + out;
}

}  // namespace

report::ServeCalibrationReport calibrate_serve(const CalibrateServeRequest& r) {
  const std::filesystem::path data_dir = data_directory();
  const std::filesystem::path published =
      r.published.empty() ? data_dir / "calibration" / "llm_measured_public.json" : r.published;
  const std::filesystem::path mapping =
      r.mapping.empty() ? data_dir / "calibration" / "llm_runs.json" : r.mapping;
  const std::filesystem::path output =
      r.output.empty() ? data_dir / "llm" / "calibrated.json" : r.output;
  const device::DeviceCatalog devices = device::DeviceCatalog::load_default(data_dir);
  const llm::ModelCatalog models = llm::ModelCatalog::load(data_dir / "llm" / "models.json");
  const serve::EngineCatalog engines = serve::EngineCatalog::load(data_dir);
  const kernel::KernelParameters kernels = kernel::KernelParameters::load(data_dir);
  const calibration::PublishedServing data =
      calibration::read_published_serving(published, mapping, models, devices);

  calibration::ServeFitInputs inputs;
  inputs.data = &data;
  inputs.models = &models;
  inputs.devices = &devices;
  inputs.engines = &engines;
  inputs.kernels = &kernels;
  inputs.cross_validate = r.cross_validate;
  inputs.progress = r.progress;

  report::ServeCalibrationReport report;
  report.fit = calibration::fit_serving(inputs);
  report.skipped = data.skipped;
  report.fit.fitted.provenance = fmt::format(
      "fitted on {} published serving runs ({}: ML.ENERGY leaderboard v1/v2, TensorRT-LLM 0.14 "
      "performance overview)",
      report.fit.runs, published.filename().string());
  report.fit.fitted.accuracy = accuracy_line(report.fit);
  if (!r.dry_run) {
    write_file_atomically(output, report.fit.fitted.to_json_text(),
                          setting_name(r.names, "output"));
    report.written = output.string();
  }
  report.context = RunContext::now(r.command_line);
  report.context.add("published", published.string())
      .add("mapping", mapping.string())
      .add("runs", report.fit.runs)
      .add("skipped", report.fit.skipped);
  return report;
}

}  // namespace nnergy::api
