#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "nnergy/core/setting_name.h"
#include "nnergy/device/precision.h"
#include "nnergy/report/archline_report.h"

namespace nnergy::api {

/// `archline show`: derived quantities of a catalog device's archline parameters.
struct ArchlineShowRequest {
  std::string device;  ///< catalog id or alias
  /// Empty: fp32 and fp64, those the device has a peak for. Only fp32 and fp64 are accepted.
  std::vector<device::Precision> precisions;
  std::filesystem::path devices_file;  ///< extra catalog; empty: none
  std::string command_line;
  SettingNames names = SettingNames::kKeyword;
};
report::ArchlineShowReport archline_show(const ArchlineShowRequest& request);

/// `archline synth`: synthetic benchmark points from a catalog device's parameters, with noise.
struct ArchlineSynthRequest {
  std::string device;                         ///< catalog id or alias
  std::vector<device::Precision> precisions;  ///< empty: fp32
  double noise = 0.02;                        ///< relative standard deviation of E, in [0, 1)
  std::uint64_t seed = 1;
  double off_clock_fraction = 0;  ///< fraction of points marked as taken at another clock
  std::filesystem::path devices_file;
  std::filesystem::path out;  ///< CSV to write (atomically)
  std::string command_line;
  SettingNames names = SettingNames::kKeyword;
};
report::ArchlineFileReport archline_synth(const ArchlineSynthRequest& request);

/// `archline run`: the microbenchmarks on a GPU (needs the CUDA kernels and NVML).
struct ArchlineRunRequest {
  std::string gpu = "cuda:0";                 ///< CUDA device to measure: "cuda:N" or "N"
  std::vector<device::Precision> precisions;  ///< empty: fp32
  double batch_time_s = 3;                    ///< ≥ 1 s (NVML averages power over ~1 s)
  /// Catalog id of the GPU (not a CUDA ordinal), recorded so that fit and plot use its peaks.
  std::optional<std::string> catalog_device;
  std::filesystem::path out;  ///< CSV to write (atomically)
  /// Called with one line per finished batch; may be empty.
  std::function<void(const std::string&)> progress;
  std::string command_line;
  SettingNames names = SettingNames::kKeyword;
};
report::ArchlineFileReport archline_run(const ArchlineRunRequest& request);

/// `archline fit` and `archline plot`: OLS fit of a CSV of benchmark points.
struct ArchlineFitRequest {
  std::filesystem::path file;                 ///< archline CSV
  std::vector<device::Precision> precisions;  ///< empty: every precision in the file
  /// Catalog device whose peaks the derived quantities use; default: the file's
  /// catalog_device, else the highest measured rates.
  std::optional<std::string> device;
  std::filesystem::path devices_file;
  double confidence = 0.95;  ///< level of the intervals, in (0, 1)
  /// Store the fitted parameters as this device in the user catalog (fit only).
  std::optional<std::string> save_device;
  /// The catalog device the saved entry copies peaks, clocks and limits from; default: the
  /// file's catalog_device.
  std::optional<std::string> base_device;
  std::string command_line;
  SettingNames names = SettingNames::kKeyword;
};
report::ArchlineFitReport archline_fit(const ArchlineFitRequest& request);
/// Fits as archline_fit (nothing saved) and draws roofline, archline and powerline with the
/// points as an SVG at `out`; with `html`, also a self-contained HTML report there (the SVG and
/// the fitted parameters with their intervals). Both files are written or neither.
report::ArchlineFileReport archline_plot(const ArchlineFitRequest& request,
                                         const std::filesystem::path& out,
                                         const std::filesystem::path& html = {});

}  // namespace nnergy::api
