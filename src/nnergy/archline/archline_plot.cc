#include "nnergy/archline/archline_plot.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "nnergy/archline/svg_chart.h"
#include "nnergy/core/text.h"

namespace nnergy::archline {

namespace {

// Colours for occupancies, low (dark blue) to high (yellow), a viridis-like ramp.
constexpr const char* kOccupancyColors[] = {"#440154", "#414487", "#2a788e", "#22a884",
                                            "#7ad151", "#bddf26", "#fde725"};
constexpr const char* kRooflineColor = "#d62728";   // red, as in the seed's figures
constexpr const char* kArchlineColor = "#1f77b4";   // blue
constexpr const char* kPowerlineColor = "#000000";  // black

double floor_decade(double v) { return std::pow(10.0, std::floor(std::log10(v))); }
double ceil_decade(double v) { return std::pow(10.0, std::ceil(std::log10(v))); }

}  // namespace

std::string render_archline_svg(const std::vector<ArchlinePlotRow>& rows,
                                const std::string& description) {
  constexpr double kPanelWidth = 696;  // 440 px of plot, and the legend column
  constexpr double kPanelHeight = 340;
  constexpr double kRowTitle = 24;
  std::string body;
  double top = 0;
  for (const ArchlinePlotRow& row : rows) {
    const ArchlineModel& m = row.model;
    std::vector<const ArchlinePoint*> drawn;
    for (const ArchlinePoint& p : row.points) {
      if (p.precision == row.precision && p.flop_count > 0 && p.byte_count > 0) drawn.push_back(&p);
    }
    double i_min = m.time_balance_flop_per_byte() / 64;
    double i_max = m.time_balance_flop_per_byte() * 64;
    for (const ArchlinePoint* p : drawn) {
      i_min = std::min(i_min, p->intensity_flop_per_byte());
      i_max = std::max(i_max, p->intensity_flop_per_byte());
    }
    const SvgChart::Axis x{"arithmetic intensity I [flop/B]", floor_decade(i_min),
                           ceil_decade(i_max), true};
    std::vector<double> grid;
    for (int k = 0; k <= 200; ++k) {
      grid.push_back(x.min * std::pow(x.max / x.min, k / 200.0));
    }
    // Occupancy → colour, in ascending order.
    std::map<double, std::vector<const ArchlinePoint*>> by_occupancy;
    for (const ArchlinePoint* p : drawn) by_occupancy[p->occupancy].push_back(p);

    auto add_points = [&](SvgChart& chart, auto&& y_of) {
      SvgChart::Series excluded;
      for (const ArchlinePoint* p : drawn) {
        if (!p->admitted) excluded.emplace_back(p->intensity_flop_per_byte(), y_of(*p));
      }
      if (!excluded.empty()) {
        chart.add_points(std::move(excluded), "#b0b0b0", "excluded: other clock (§3.1.2)");
      }
      std::size_t index = 0;
      for (const auto& [occupancy, points] : by_occupancy) {
        SvgChart::Series series;
        for (const ArchlinePoint* p : points) {
          if (p->admitted) series.emplace_back(p->intensity_flop_per_byte(), y_of(*p));
        }
        const std::size_t palette = std::size(kOccupancyColors);
        const std::size_t color = by_occupancy.size() <= 1
                                      ? palette - 1
                                      : index * (palette - 1) / (by_occupancy.size() - 1);
        chart.add_points(std::move(series), kOccupancyColors[color],
                         fmt::format("{}, occupancy {:.3g} %", row.points_origin, occupancy * 100));
        ++index;
      }
    };
    auto add_markers = [&](SvgChart& chart) {
      chart.add_marker(
          m.time_balance_flop_per_byte(), kRooflineColor,
          fmt::format("B_τ {:.3g} flop/B: time balance", m.time_balance_flop_per_byte()));
      chart.add_marker(
          m.energy_balance_flop_per_byte(), kArchlineColor,
          fmt::format("B_ε {:.3g} flop/B: energy balance", m.energy_balance_flop_per_byte()));
      chart.add_marker(m.effective_energy_balance_point_flop_per_byte(), "#17becf",
                       fmt::format("B̂_ε {:.3g} flop/B: effective energy balance",
                                   m.effective_energy_balance_point_flop_per_byte()));
    };
    auto y_range = [&](std::vector<double> values, double pad_low, double pad_high) {
      const auto [lo, hi] = std::minmax_element(values.begin(), values.end());
      return std::pair<double, double>(floor_decade(*lo * pad_low), ceil_decade(*hi * pad_high));
    };

    // Roofline, GFLOP/s.
    std::vector<double> roof_values;
    SvgChart::Series roof;
    for (double i : grid) {
      roof.emplace_back(i, m.roofline_flop_per_s(i) / 1e9);
      roof_values.push_back(roof.back().second);
    }
    for (const ArchlinePoint* p : drawn) roof_values.push_back(p->flop_count / p->time_s / 1e9);
    const auto [roof_lo, roof_hi] = y_range(roof_values, 1, 1.5);
    SvgChart roofline(row.label + ": roofline", x,
                      {"performance [GFLOP/s]", roof_lo, roof_hi, true}, kPanelWidth, kPanelHeight);
    roofline.add_line(std::move(roof), kRooflineColor, "roofline min(peak, I·bandwidth)");
    add_points(roofline, [](const ArchlinePoint& p) { return p.flop_count / p.time_s / 1e9; });
    add_markers(roofline);

    // Archline, GFLOP/J.
    std::vector<double> arch_values;
    SvgChart::Series arch;
    for (double i : grid) {
      arch.emplace_back(i, m.flop_per_joule(i) / 1e9);
      arch_values.push_back(arch.back().second);
    }
    for (const ArchlinePoint* p : drawn) arch_values.push_back(p->flop_count / p->energy_j / 1e9);
    const auto [arch_lo, arch_hi] = y_range(arch_values, 1, 1.5);
    SvgChart archline(row.label + ": archline", x,
                      {"energy efficiency [GFLOP/J]", arch_lo, arch_hi, true}, kPanelWidth,
                      kPanelHeight);
    archline.add_line(std::move(arch), kArchlineColor, "archline W/E (Eq. 9)");
    add_points(archline, [](const ArchlinePoint& p) { return p.flop_count / p.energy_j / 1e9; });
    add_markers(archline);

    // Powerline, W.
    std::vector<double> power_values;
    SvgChart::Series power;
    for (double i : grid) {
      power.emplace_back(i, m.power_w(i));
      power_values.push_back(power.back().second);
    }
    for (const ArchlinePoint* p : drawn) power_values.push_back(p->energy_j / p->time_s);
    power_values.push_back(m.pi0_w);
    const auto [power_lo, power_hi] = y_range(power_values, 0.8, 1.3);
    SvgChart powerline(row.label + ": powerline", x, {"power [W]", power_lo, power_hi, true},
                       kPanelWidth, kPanelHeight);
    powerline.add_line(std::move(power), kPowerlineColor, "powerline (Eq. 10)");
    powerline.add_line({{x.min, m.pi0_w}, {x.max, m.pi0_w}}, "#7f7f7f",
                       fmt::format("π0 {:.1f} W", m.pi0_w), true);
    add_points(powerline, [](const ArchlinePoint& p) { return p.energy_j / p.time_s; });
    add_markers(powerline);

    body += fmt::format(
        "<text x=\"12\" y=\"{:.1f}\" font-size=\"13\">{}: ε_flop {:.3g} pJ/flop, ε_mem {:.3g} "
        "pJ/B, π0 {:.4g} W; peak {:.4g} TFLOP/s, {:.4g} TB/s</text>\n",
        top + 16, markup_escape(row.label), m.eps_flop_j * 1e12, m.eps_mem_j_per_byte * 1e12,
        m.pi0_w, m.peak_flop_per_s / 1e12, m.bandwidth_byte_per_s / 1e12);
    body += roofline.render(0, top + kRowTitle);
    body += archline.render(kPanelWidth, top + kRowTitle);
    body += powerline.render(2 * kPanelWidth, top + kRowTitle);
    top += kRowTitle + kPanelHeight;
  }
  return svg_document(body, 3 * kPanelWidth, std::max(top, 1.0), description);
}

}  // namespace nnergy::archline
