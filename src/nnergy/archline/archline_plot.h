#pragma once

#include <string>
#include <vector>

#include "nnergy/archline/archline_model.h"
#include "nnergy/archline/archline_point.h"
#include "nnergy/device/precision.h"

namespace nnergy::archline {

/// One row of the plot: a precision's model and its measured roofline points.
struct ArchlinePlotRow {
  device::Precision precision = device::Precision::kFp32;
  ArchlineModel model;
  std::vector<ArchlinePoint> points;       ///< only points with W > 0 and Q > 0 are drawn
  std::string label;                       ///< e.g. "a100-40gb fp32 (fit of run.csv)"
  std::string points_origin = "measured";  ///< legend word for the points, or "synthetic"
};

/// An SVG with, per row, three log-log panels over arithmetic intensity (seed 003 Figs. 6–9):
/// the roofline (flop/s, Eq. as min(peak, I·bandwidth)), the archline (flop/J, Eq. 9) and the
/// powerline (W, Eq. 10), each with the measured points coloured by occupancy and dotted lines
/// at B_τ, B_ε and the effective energy balance point B̂_ε. `description` (the run context)
/// becomes the document's <desc>.
std::string render_archline_svg(const std::vector<ArchlinePlotRow>& rows,
                                const std::string& description = "");

}  // namespace nnergy::archline
