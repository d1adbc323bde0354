#include "nnergy/api/compare.h"

#include <fmt/format.h>

#include <algorithm>
#include <future>
#include <thread>

#include "nnergy/api/gpu_devices.h"
#include "nnergy/api/predict.h"
#include "nnergy/api/run_precision.h"
#include "nnergy/core/data_directory.h"
#include "nnergy/core/error.h"
#include "nnergy/device/device_catalog.h"
#include "nnergy/graph/onnx_importer.h"
#include "nnergy/graph/zoo.h"

namespace nnergy::api {

namespace {

using detail::is_gpu;

report::ComparedDevice compared_device(const device::DeviceSpec& d, device::Precision precision) {
  report::ComparedDevice c;
  c.id = d.id;
  c.name = d.name;
  c.generation = d.generation();
  if (d.calibration.provenance.empty()) {
    c.time_model = "estimated";
    c.provenance = "not calibrated: the catalog's estimated efficiencies for " + c.generation;
  } else {
    c.time_model = d.calibration.transferred ? "transferred" : "calibrated";
    c.provenance = d.calibration.provenance;
  }
  const device::ArchlineParameters archline = d.archline_for(precision);
  c.power_model = archline.estimated ? "estimated" : "measured";
  c.power_provenance = archline.source;
  c.memory_bytes = d.memory_gib * 1024.0 * 1024.0 * 1024.0;
  c.relative_time_std = d.calibration.relative_time_std();
  return c;
}

// A comparison row from a prediction's totals (boost) or from one point of its clock sweep.
report::ComparisonRow row_from(const report::PredictionReport& p, std::int64_t batch) {
  report::ComparisonRow r;
  r.device = p.device->id;
  r.batch = batch;
  r.clock_mhz = p.prediction.settings.point.clock_mhz;
  // As predict decides: refused (here: not ranked) only beyond the estimate's uncertainty band.
  r.fits_memory = !(p.memory && p.memory->exceeds_device_beyond_uncertainty());
  r.may_not_fit = r.fits_memory && p.memory && p.memory->exceeds_device();
  r.memory_peak_bytes = p.memory ? p.memory->peak_bytes : 0;
  const network::NetworkTotals& t = p.prediction.totals;
  r.host_bound = t.host_launch_s > t.gpu_time_s;
  r.time_s = t.time_s;
  r.time_std_s = t.time_std_s;
  r.energy_j = t.energy_j;
  r.energy_std_j = t.energy_std_j;
  r.power_w = t.power_w;
  r.edp_j_s = t.edp_j_s;
  r.edp_std_j_s = t.edp_std_j_s;
  return r;
}

struct DeviceResult {
  std::vector<report::ComparisonRow> rows;
  std::optional<std::int64_t> largest_fitting_batch;
  std::string model_name;
};

// One device at every batch: a prediction at the boost clock with a clock sweep, then the
// prediction at the sweep's energy-optimal clock (host-bound flags and memory come from it).
DeviceResult compare_device(const CompareRequest& request, device::Precision precision,
                            const std::string& device_id,
                            const std::vector<std::optional<std::int64_t>>& batches) {
  DeviceResult out;
  for (const std::optional<std::int64_t>& batch : batches) {
    PredictRequest p;
    p.names = request.names;
    p.command_line = request.command_line;
    p.model = request.model;
    p.device = device_id;
    p.devices_file = request.devices_file;
    p.mode = request.mode;
    p.batch = batch;
    p.dims = request.dims;
    p.precision = precision;
    p.host_launch_us = request.host_launch_us;
    p.optimizer = request.optimizer;
    p.ignore_memory = true;  // a run that does not fit is shown as such, not refused
    p.sweep_clocks = true;
    const report::PredictionReport boost = predict(p);
    const std::int64_t computed_batch = boost.prediction.settings.batch;
    out.model_name = boost.network->name;
    out.rows.push_back(row_from(boost, computed_batch));
    if (boost.memory) out.largest_fitting_batch = boost.memory->largest_fitting_batch;
    p.sweep_clocks = false;
    p.clock_mhz = boost.sweep->points[boost.sweep->energy_optimal].clock_mhz;
    report::ComparisonRow optimal = row_from(predict(p), computed_batch);
    optimal.energy_optimal_clock = true;
    out.rows.push_back(optimal);
  }
  return out;
}

}  // namespace

report::ComparisonReport compare(const CompareRequest& request) {
  for (std::int64_t b : request.batches) {
    if (b <= 0) {
      throw InvalidInput(setting_with_value(request.names, "batches", std::to_string(b)) +
                         ": expected positive integers");
    }
  }
  const std::filesystem::path data_dir = data_directory();
  const device::DeviceCatalog catalog =
      device::DeviceCatalog::load_with_user(data_dir, request.devices_file);
  report::ComparisonReport report;
  // The precision decides which devices can run the model, so it is settled first.
  graph::DimBindings bindings;
  if (!request.batches.empty()) bindings.batch = request.batches.front();
  bindings.named = request.dims;
  bindings.names = request.names;
  const detail::RunPrecision run = detail::run_precision(
      request.precision,
      graph::import_onnx(graph::resolve_model(request.model, data_dir), bindings), request.names);
  const device::Precision precision = run.precision;
  if (!run.note.empty()) report.notes.push_back(run.note);
  std::vector<std::string> ids;
  const std::string device_setting = setting_name(request.names, "devices");
  if (request.devices.empty()) {
    for (const device::DeviceSpec& d : catalog.devices()) {
      if (!is_gpu(d)) continue;
      if (!d.peak(precision)) {
        report.notes.push_back(fmt::format("{} left out: no {} peak in the catalog", d.id,
                                           device::to_string(precision)));
        continue;
      }
      ids.push_back(d.id);
    }
  } else {
    for (const std::string& name : request.devices) {
      const device::DeviceSpec& d = catalog.find(name, device_setting);
      if (std::find(ids.begin(), ids.end(), d.id) != ids.end()) continue;  // alias of one listed
      ids.push_back(d.id);
    }
  }
  if (ids.empty()) throw InvalidInput(device_setting + ": no device to compare");
  for (const std::string& id : ids) {
    report.devices.push_back(compared_device(catalog.find(id, device_setting), precision));
  }

  std::vector<std::optional<std::int64_t>> batches;
  for (std::int64_t b : request.batches) batches.emplace_back(b);
  if (batches.empty()) batches.emplace_back(std::nullopt);

  // Devices in parallel, a few at a time: each prediction is independent and thread-safe.
  const std::size_t workers = std::max<std::size_t>(
      1, std::min<std::size_t>(ids.size(), std::thread::hardware_concurrency()));
  std::vector<DeviceResult> results(ids.size());
  for (std::size_t start = 0; start < ids.size(); start += workers) {
    std::vector<std::future<DeviceResult>> running;
    for (std::size_t i = start; i < std::min(ids.size(), start + workers); ++i) {
      running.push_back(std::async(std::launch::async, compare_device, std::cref(request),
                                   precision, std::cref(ids[i]), std::cref(batches)));
    }
    for (std::size_t i = 0; i < running.size(); ++i) results[start + i] = running[i].get();
  }

  for (std::size_t i = 0; i < ids.size(); ++i) {
    report.devices[i].largest_fitting_batch = results[i].largest_fitting_batch;
    for (report::ComparisonRow& row : results[i].rows) report.rows.push_back(std::move(row));
  }
  report::rank_rows(report.rows);
  report.network = results.front().model_name;
  report.mode = graph::to_string(request.mode);
  report.precision = device::to_string(precision);
  for (const report::ComparisonRow& row : report.rows) {
    if (std::find(report.batches.begin(), report.batches.end(), row.batch) ==
        report.batches.end()) {
      report.batches.push_back(row.batch);
    }
  }
  report.notes.insert(
      report.notes.begin(),
      {"time: the analytical roofline model with each device's calibrated, transferred or "
       "estimated efficiencies (see the provenance); power: the archline energy model; energy "
       "= time × power; as `nnergy predict` computes them",
       "the energy-optimal clock is each device's own, from a sweep over its clocks; a GPU "
       "reaches it only with its clocks locked (nvidia-smi -lgc)",
       "memory is an estimate (weights, gradients, optimizer state, live activations): a row "
       "that exceeds its device's memory beyond the estimate's uncertainty is shown but not "
       "ranked; one over it by less is ranked and marked 'may not fit'"});
  report.context = RunContext::now(request.command_line);
  report.context.add("network", {{"name", report.network}, {"source", request.model}})
      .add("mode", report.mode)
      .add("precision", report.precision)
      .add("batches", report.batches)
      .add("devices", ids)
      .add("catalog", catalog.sources());
  return report;
}

}  // namespace nnergy::api
