#include "nnergy/api/calibrate_kernels.h"

#include "nnergy/calibration/kernel_tables.h"
#include "nnergy/core/atomic_file.h"
#include "nnergy/core/data_directory.h"
#include "nnergy/core/error.h"
#include "nnergy/device/device_catalog.h"

namespace nnergy::api {

report::KernelCalibrationReport calibrate_kernels(const CalibrateKernelsRequest& r) {
  const std::filesystem::path data_dir = data_directory();
  const std::filesystem::path table =
      r.table.empty() ? data_dir / "calibration" / "kernels" / "aic_gemm.csv.gz" : r.table;
  const std::filesystem::path output =
      r.output.empty() ? data_dir / "kernel" / "calibrated.json" : r.output;
  // The datasheet catalog without the whole-network calibration: the kernel model takes only
  // datasheet figures from it.
  const device::DeviceCatalog devices = device::DeviceCatalog::load(data_dir / "devices.json");
  report::KernelCalibrationReport report;
  const std::vector<calibration::MeasuredGemm> rows =
      calibration::read_gemm_table(table, devices, &report.skipped);
  if (rows.empty()) {
    throw InvalidInput(table.string() +
                       ": no GEMM of a GPU, format and engine nnergy knows; nothing to fit");
  }
  report.fit = calibration::fit_kernels(rows, devices, r.progress);
  if (!r.dry_run) {
    write_file_atomically(output, report.fit.parameters.to_json_text(),
                          setting_name(r.names, "output"));
    report.written = output.string();
  }
  report.context = RunContext::now(r.command_line);
  report.context.add("table", table.string()).add("rows", report.fit.rows);
  return report;
}

}  // namespace nnergy::api
