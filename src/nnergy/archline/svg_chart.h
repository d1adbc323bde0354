#pragma once

#include <string>
#include <utility>
#include <vector>

namespace nnergy::archline {

/// A small SVG line/scatter chart with logarithmic or linear axes, tick labels, axis titles
/// (with units) and a legend in a column right of the plot area (`width_px` includes it). Our own
/// code: no plotting dependency. Not thread-safe.
class SvgChart {
 public:
  struct Axis {
    std::string title;  ///< with its unit, e.g. "arithmetic intensity I [flop/B]"
    double min = 1;
    double max = 10;
    bool log = true;
  };
  using Series = std::vector<std::pair<double, double>>;

  SvgChart(std::string title, Axis x, Axis y, double width_px = 480, double height_px = 360);

  /// A polyline through `xy` (points outside the axes are clipped by the plot area).
  void add_line(Series xy, std::string color, std::string legend, bool dashed = false);
  /// Circles at `xy`; an empty `legend` adds no legend entry.
  void add_points(Series xy, std::string color, std::string legend);
  /// A dotted vertical line at x; `label` goes in the legend.
  void add_marker(double x, std::string color, std::string label);

  double width_px() const { return width_px_; }
  double height_px() const { return height_px_; }
  /// The chart as an SVG <g> element translated to (`left_px`, `top_px`).
  std::string render(double left_px, double top_px) const;

 private:
  struct Layer {
    Series xy;
    std::string color;
    std::string legend;
    bool line = true;
    bool dashed = false;
  };
  struct Marker {
    double x;
    std::string color;
    std::string label;
  };
  /// Right margin, px: room for the legend column when there is a legend entry or a marker.
  double margin_right() const;
  double to_px_x(double x) const;
  double to_px_y(double y) const;

  std::string title_;
  Axis x_;
  Axis y_;
  double width_px_;
  double height_px_;
  std::vector<Layer> layers_;
  std::vector<Marker> markers_;
};

/// A complete SVG document of `width_px` × `height_px` holding `body` (rendered charts) and, when
/// not empty, `description` as its <desc> (the run context).
std::string svg_document(const std::string& body, double width_px, double height_px,
                         const std::string& description = "");

}  // namespace nnergy::archline
