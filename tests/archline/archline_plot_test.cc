#include "nnergy/archline/archline_plot.h"

#include <gtest/gtest.h>

#include "nnergy/archline/synthetic_benchmark.h"

namespace nnergy::archline {
namespace {

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) {
    ++n;
  }
  return n;
}

TEST(ArchlinePlot, DrawsThreePanelsWithUnitsAndEveryRooflinePoint) {
  ArchlinePlotRow row;
  row.model.eps_flop_j = 6.21e-12;
  row.model.eps_mem_j_per_byte = 93.48e-12;
  row.model.pi0_w = 98.42;
  row.model.peak_flop_per_s = 19.5e12;
  row.model.bandwidth_byte_per_s = 1.555e12;
  row.label = "a100-40gb fp32";
  SyntheticOptions o;
  o.truth = row.model;
  o.fma_per_thread = {1, 4, 16, 64, 256};
  o.occupancies = {0.125, 1.0};
  row.points = generate_synthetic_points(o);
  const std::string svg = render_archline_svg({row});
  EXPECT_EQ(svg.rfind("<?xml", 0), 0u);
  EXPECT_NE(svg.find("</svg>"), std::string::npos);
  for (const char* title : {"arithmetic intensity I [flop/B]", "performance [GFLOP/s]",
                            "energy efficiency [GFLOP/J]", "power [W]", "roofline", "archline",
                            "powerline (Eq. 10)", "occupancy 12.5 %", "occupancy 100 %"}) {
    EXPECT_NE(svg.find(title), std::string::npos) << title;
  }
  // 5 intensities × 2 occupancies roofline points in each of 3 panels, plus 2 legend dots per
  // panel; baseline, copy and flop points have no finite intensity and are not drawn.
  EXPECT_EQ(count(svg, "<circle"), 5u * 2u * 3u + 2u * 3u);
  EXPECT_EQ(count(svg, "B_τ 12.5"), 3u);  // 19.5 TFLOP/s over 1.555 TB/s
}

}  // namespace
}  // namespace nnergy::archline
