#pragma once

#include <cstddef>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "nnergy/archline/archline_fit.h"
#include "nnergy/archline/archline_model.h"
#include "nnergy/archline/archline_point.h"
#include "nnergy/core/run_context.h"
#include "nnergy/device/device_spec.h"

namespace nnergy::report {

/// `archline show`: a catalog device's archline parameters and the quantities derived from them.
struct ArchlineShowReport {
  RunContext context;
  std::string device_id;
  std::string device_name;
  struct Column {
    device::Precision precision = device::Precision::kFp32;
    archline::ArchlineModel model;
    device::ArchlineParameters parameters;  ///< where the values come from
  };
  std::vector<Column> columns;  ///< one per precision the device has a peak for
};

/// The peaks a fit's derived quantities are read against.
struct ArchlinePeaks {
  double flop_per_s = 0;
  double byte_per_s = 0;
  std::string source;  ///< "catalog device a100-40gb" or "highest measured rates (W/T, Q/T)"
};

/// `archline fit`: the OLS fits of one CSV of benchmark points, one per precision.
struct ArchlineFitReport {
  RunContext context;
  std::string file;  ///< the CSV, as given
  archline::ArchlineDataSet data;
  double confidence = 0.95;  ///< level of the confidence intervals
  struct Fit {
    archline::ArchlineFitResult result;
    ArchlinePeaks peaks;
  };
  std::vector<Fit> fits;
  /// The device the fitted parameters were saved as, and the user catalog holding it.
  std::optional<std::string> saved_device;
  std::filesystem::path user_catalog;
};

/// A file an `archline` subcommand wrote (run, synth: points; plot: an SVG).
struct ArchlineFileReport {
  std::filesystem::path path;
  std::size_t count = 0;  ///< points written, or precisions drawn
  std::string what;       ///< e.g. "synthetic points of a100-40gb", "measured points"
};

std::string render_text(const ArchlineShowReport& report);
nlohmann::ordered_json to_json(const ArchlineShowReport& report);
std::string render_text(const ArchlineFitReport& report);
nlohmann::ordered_json to_json(const ArchlineFitReport& report);
/// "wrote N <what> to PATH".
std::string render_text(const ArchlineFileReport& report);

}  // namespace nnergy::report
