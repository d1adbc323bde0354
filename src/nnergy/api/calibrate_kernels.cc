#include "nnergy/api/calibrate_kernels.h"

#include "nnergy/calibration/attention_fit.h"
#include "nnergy/calibration/collective_fit.h"
#include "nnergy/calibration/kernel_tables.h"
#include "nnergy/calibration/moe_fit.h"
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
  std::vector<calibration::MeasuredGemm> rows =
      calibration::read_gemm_table(table, devices, &report.skipped);
  if (rows.empty()) {
    throw InvalidInput(table.string() +
                       ": no GEMM of a GPU, format and engine nnergy knows; nothing to fit");
  }
  // PyTorch's fp32 GEMMs on the CUDA cores, beside the engines' (none when a user's table
  // stands alone).
  const std::filesystem::path fp32_table = table.parent_path() / "neusight_ops.csv.gz";
  int fp32_rows = 0;
  if (std::filesystem::exists(fp32_table)) {
    std::vector<calibration::MeasuredGemm> fp32 =
        calibration::read_pytorch_fp32_gemm_table(fp32_table, devices);
    fp32_rows = static_cast<int>(fp32.size());
    rows.insert(rows.end(), std::make_move_iterator(fp32.begin()),
                std::make_move_iterator(fp32.end()));
  }
  // The attention table beside the GEMM table (none when a user's table stands alone), read
  // once: its decode rows with power fix the power model's DRAM share, all its rows the
  // attention class.
  const std::filesystem::path attention = table.parent_path() / "aic_attention.csv.gz";
  const std::vector<calibration::MeasuredAttention> attention_rows =
      std::filesystem::exists(attention) ? calibration::read_attention_table(attention, devices)
                                         : std::vector<calibration::MeasuredAttention>{};
  const std::vector<calibration::MeasuredStream> streams =
      calibration::decode_attention_streams(attention_rows);
  report.fit = calibration::fit_kernels(rows, streams, devices, r.progress);
  calibration::fit_attention(attention_rows, devices, report.fit);
  // Collectives: NCCL's and the engines' all-reduce kernels.
  const std::filesystem::path comm = table.parent_path() / "aic_comm.csv.gz";
  if (std::filesystem::exists(comm))
    calibration::fit_collectives(calibration::read_collective_table(comm, devices), devices,
                                 report.fit);
  // Fused MoE layers.
  const std::filesystem::path moe = table.parent_path() / "aic_moe.csv.gz";
  if (std::filesystem::exists(moe))
    calibration::fit_moe(calibration::read_moe_table(moe, devices), devices, report.fit);
  if (!r.dry_run) {
    write_file_atomically(output, report.fit.parameters.to_json_text(),
                          setting_name(r.names, "output"));
    report.written = output.string();
  }
  report.context = RunContext::now(r.command_line);
  report.context.add("table", table.string()).add("rows", report.fit.rows);
  if (fp32_rows > 0)
    report.context.add("fp32 GEMM table", fp32_table.string()).add("fp32 GEMM rows", fp32_rows);
  if (!streams.empty()) report.context.add("power table", attention.string());
  if (report.fit.collective_rows > 0)
    report.context.add("collective table", comm.string())
        .add("collective rows", report.fit.collective_rows);
  if (report.fit.moe_rows > 0)
    report.context.add("MoE table", moe.string()).add("MoE rows", report.fit.moe_rows);
  if (report.fit.attention_rows > 0)
    report.context.add("attention table", attention.string())
        .add("attention rows", report.fit.attention_rows);
  return report;
}

}  // namespace nnergy::api
