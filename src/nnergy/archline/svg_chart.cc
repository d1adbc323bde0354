#include "nnergy/archline/svg_chart.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "nnergy/core/error.h"
#include "nnergy/core/text.h"

namespace nnergy::archline {

namespace {

constexpr double kMarginLeft = 64;
constexpr double kMarginRight = 16;
// The legend is a column right of the plot area, so that it never hides a point or a line.
constexpr double kLegendWidth = 256;
constexpr double kLegendLine = 14;
constexpr double kMarginTop = 28;
constexpr double kMarginBottom = 44;

// Tick values of an axis: decades on a log axis, ~6 round steps on a linear one.
std::vector<double> ticks(const SvgChart::Axis& a) {
  std::vector<double> out;
  if (a.log) {
    for (double e = std::floor(std::log10(a.min)); e <= std::ceil(std::log10(a.max)); e += 1) {
      const double v = std::pow(10.0, e);
      if (v >= a.min * (1 - 1e-9) && v <= a.max * (1 + 1e-9)) out.push_back(v);
    }
    return out;
  }
  const double raw = (a.max - a.min) / 6;
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  double step = magnitude;
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    step = m * magnitude;
    if (step >= raw) break;
  }
  for (double v = std::ceil(a.min / step) * step; v <= a.max + 1e-9 * step; v += step) {
    out.push_back(std::fabs(v) < 1e-12 * step ? 0 : v);
  }
  return out;
}

std::string tick_label(double v) {
  if (v != 0 && (std::fabs(v) >= 1e5 || std::fabs(v) < 1e-3)) {
    return fmt::format("1e{:d}", static_cast<int>(std::lround(std::log10(std::fabs(v)))));
  }
  return fmt::format("{:g}", v);
}

}  // namespace

SvgChart::SvgChart(std::string title, Axis x, Axis y, double width_px, double height_px)
    : title_(std::move(title)),
      x_(std::move(x)),
      y_(std::move(y)),
      width_px_(width_px),
      height_px_(height_px) {
  for (const Axis* a : {&x_, &y_}) {
    if (!(a->max > a->min) || (a->log && !(a->min > 0))) {
      throw InternalError(
          fmt::format("SvgChart '{}': invalid axis range [{:g}, {:g}]", title_, a->min, a->max));
    }
  }
}

void SvgChart::add_line(Series xy, std::string color, std::string legend, bool dashed) {
  layers_.push_back({std::move(xy), std::move(color), std::move(legend), true, dashed});
}

void SvgChart::add_points(Series xy, std::string color, std::string legend) {
  layers_.push_back({std::move(xy), std::move(color), std::move(legend), false, false});
}

void SvgChart::add_marker(double x, std::string color, std::string label) {
  markers_.push_back({x, std::move(color), std::move(label)});
}

double SvgChart::margin_right() const {
  const bool legend =
      !markers_.empty() ||
      std::any_of(layers_.begin(), layers_.end(), [](const Layer& l) { return !l.legend.empty(); });
  return legend ? kMarginRight + kLegendWidth : kMarginRight;
}

double SvgChart::to_px_x(double x) const {
  const double w = width_px_ - kMarginLeft - margin_right();
  const double f =
      x_.log ? (std::log10(x) - std::log10(x_.min)) / (std::log10(x_.max) - std::log10(x_.min))
             : (x - x_.min) / (x_.max - x_.min);
  return kMarginLeft + f * w;
}

double SvgChart::to_px_y(double y) const {
  const double h = height_px_ - kMarginTop - kMarginBottom;
  const double f =
      y_.log ? (std::log10(y) - std::log10(y_.min)) / (std::log10(y_.max) - std::log10(y_.min))
             : (y - y_.min) / (y_.max - y_.min);
  return kMarginTop + (1 - f) * h;
}

std::string SvgChart::render(double left_px, double top_px) const {
  const double x0 = kMarginLeft;
  const double x1 = width_px_ - margin_right();
  const double y0 = kMarginTop;
  const double y1 = height_px_ - kMarginBottom;
  // Charts of one document sit at different positions, which makes the clip id unique.
  const std::string clip_id = fmt::format("plot-area-{:.0f}-{:.0f}", left_px, top_px);
  std::string s = fmt::format("<g transform=\"translate({:.1f},{:.1f})\">\n", left_px, top_px);
  s += fmt::format(
      "<clipPath id=\"{}\"><rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" "
      "height=\"{:.1f}\"/></clipPath>\n",
      clip_id, x0, y0, x1 - x0, y1 - y0);
  s += fmt::format(
      "<text x=\"{:.1f}\" y=\"16\" text-anchor=\"middle\" font-size=\"13\" "
      "font-weight=\"bold\">{}</text>\n",
      (x0 + x1) / 2, markup_escape(title_));
  // Grid and tick labels.
  for (double v : ticks(x_)) {
    const double px = to_px_x(v);
    s += fmt::format(
        "<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\" "
        "stroke=\"#ddd\"/>\n",
        px, y0, y1);
    s += fmt::format(
        "<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\" font-size=\"10\">{}"
        "</text>\n",
        px, y1 + 14, tick_label(v));
  }
  for (double v : ticks(y_)) {
    const double py = to_px_y(v);
    s += fmt::format(
        "<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{2:.1f}\" y2=\"{1:.1f}\" "
        "stroke=\"#ddd\"/>\n",
        x0, py, x1);
    s += fmt::format(
        "<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"end\" font-size=\"10\">{}"
        "</text>\n",
        x0 - 4, py + 3, tick_label(v));
  }
  s += fmt::format(
      "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" "
      "fill=\"none\" stroke=\"#333\"/>\n",
      x0, y0, x1 - x0, y1 - y0);
  s += fmt::format(
      "<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\" font-size=\"11\">{}"
      "</text>\n",
      (x0 + x1) / 2, height_px_ - 8, markup_escape(x_.title));
  s += fmt::format(
      "<text transform=\"translate(14,{:.1f}) rotate(-90)\" text-anchor=\"middle\" "
      "font-size=\"11\">{}</text>\n",
      (y0 + y1) / 2, markup_escape(y_.title));
  s += fmt::format("<g clip-path=\"url(#{})\">\n", clip_id);
  // Markers are dotted lines here; their labels are in the legend, since close markers
  // (B_τ, B_ε, B̂_ε) would write over each other and over the points.
  for (const Marker& m : markers_) {
    if (!(m.x > x_.min && m.x < x_.max)) continue;
    s += fmt::format(
        "<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\" "
        "stroke=\"{3}\" stroke-dasharray=\"2,3\"/>\n",
        to_px_x(m.x), y0, y1, m.color);
  }
  for (const Layer& layer : layers_) {
    auto inside = [&](const std::pair<double, double>& p) {
      return std::isfinite(p.first) && std::isfinite(p.second) && (!x_.log || p.first > 0) &&
             (!y_.log || p.second > 0);
    };
    if (layer.line) {
      std::string path;
      for (const auto& p : layer.xy) {
        if (!inside(p)) continue;
        path += fmt::format("{}{:.1f},{:.1f}", path.empty() ? "M" : " L", to_px_x(p.first),
                            to_px_y(p.second));
      }
      s += fmt::format("<path d=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\"{}/>\n", path,
                       layer.color, layer.dashed ? " stroke-dasharray=\"6,4\"" : "");
    } else {
      for (const auto& p : layer.xy) {
        if (!inside(p)) continue;
        s += fmt::format(
            "<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3\" fill=\"{}\" "
            "fill-opacity=\"0.8\"/>\n",
            to_px_x(p.first), to_px_y(p.second), layer.color);
      }
    }
  }
  s += "</g>\n";
  // Legend: lines and point series, then markers, in the column right of the plot area.
  const double lx = x1 + 10;
  double ly = y0 + 10;
  auto sample_line = [&](const std::string& color, const char* dash) {
    s += fmt::format(
        "<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"{}\" "
        "stroke-width=\"2\"{}/>\n",
        lx, ly - 4, lx + 18, ly - 4, color, dash);
  };
  auto legend_text = [&](const std::string& text) {
    s += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"10\">{}</text>\n", lx + 24, ly,
                     markup_escape(text));
    ly += kLegendLine;
  };
  for (const Layer& layer : layers_) {
    if (layer.legend.empty()) continue;
    if (layer.line) {
      sample_line(layer.color, layer.dashed ? " stroke-dasharray=\"6,4\"" : "");
    } else {
      s += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3\" fill=\"{}\"/>\n", lx + 9,
                       ly - 4, layer.color);
    }
    legend_text(layer.legend);
  }
  for (const Marker& m : markers_) {
    sample_line(m.color, " stroke-dasharray=\"2,3\"");
    legend_text(m.label);
  }
  s += "</g>\n";
  return s;
}

std::string svg_document(const std::string& body, double width_px, double height_px,
                         const std::string& description) {
  return fmt::format(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0:.0f}\" height=\"{1:.0f}\" "
      "viewBox=\"0 0 {0:.0f} {1:.0f}\" font-family=\"sans-serif\">\n{3}"
      "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n{2}</svg>\n",
      width_px, height_px, body,
      description.empty() ? std::string() : "<desc>" + markup_escape(description) + "</desc>\n");
}

}  // namespace nnergy::archline
