#include "nnergy/archline/synthetic_benchmark.h"

#include <fmt/format.h>

#include <algorithm>
#include <random>

#include "nnergy/core/error.h"

namespace nnergy::archline {

std::vector<ArchlinePoint> generate_synthetic_points(const SyntheticOptions& o) {
  const ArchlineModel& m = o.truth;
  if (!(o.noise >= 0) || o.fma_per_thread.empty() || o.occupancies.empty() ||
      !(m.eps_flop_j > 0 && m.eps_mem_j_per_byte > 0 && m.pi0_w > 0 && m.peak_flop_per_s > 0 &&
        m.bandwidth_byte_per_s > 0 && o.batch_time_s > 0) ||
      !(o.off_clock_fraction >= 0 && o.off_clock_fraction <= 1)) {
    throw InvalidInput(fmt::format(
        "synthetic archline points: expected noise >= 0, positive parameters, peaks and batch "
        "time, non-empty sweeps, off-clock fraction in [0, 1]; found noise {:g}, eps_flop {:g} "
        "J, eps_mem {:g} J/B, pi0 {:g} W",
        o.noise, m.eps_flop_j, m.eps_mem_j_per_byte, m.pi0_w));
  }
  std::mt19937_64 rng(o.seed);
  std::normal_distribution<double> gaussian(0.0, 1.0);
  std::uniform_real_distribution<double> duration_jitter(0.8, 1.2);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  const double word = bytes_per_word(o.precision);
  std::vector<ArchlinePoint> points;

  auto add = [&](BenchmarkKind kind, double occupancy, double flop_per_thread,
                 double bytes_per_thread) {
    const double flop_rate = m.peak_flop_per_s * std::min(1.0, 2 * occupancy);
    const double byte_rate = m.bandwidth_byte_per_s * std::min(1.0, 3 * occupancy) * 0.9;
    ArchlinePoint p;
    p.benchmark = kind;
    p.precision = o.precision;
    p.occupancy = occupancy;
    p.time_s = o.batch_time_s * duration_jitter(rng);
    // The roofline: the batch is as long as its slower resource needs.
    const double time_per_thread_s =
        std::max(flop_per_thread / flop_rate, bytes_per_thread / byte_rate);
    const double threads = time_per_thread_s > 0 ? p.time_s / time_per_thread_s : 0;
    p.flop_count = threads * flop_per_thread;
    p.byte_count = threads * bytes_per_thread;
    const double truth_j = m.energy_j(p.flop_count, p.byte_count, p.time_s);
    p.energy_j = truth_j * std::max(0.05, 1 + o.noise * gaussian(rng));
    if (o.off_clock_fraction > 0 && unit(rng) < o.off_clock_fraction) {
      p.admitted = false;
      p.energy_j *= 0.85;
    }
    p.power_mean_w = p.energy_j / p.time_s;
    points.push_back(p);
  };

  for (double occupancy : o.occupancies) {
    if (!(occupancy > 0 && occupancy <= 1)) {
      throw InvalidInput(
          fmt::format("synthetic archline points: occupancy {:g} outside (0, 1]", occupancy));
    }
    for (int n : o.fma_per_thread) {
      if (n < 1) throw InvalidInput("synthetic archline points: flop per thread must be >= 1");
      add(BenchmarkKind::kRoofline, occupancy, 2.0 * n, 2 * word);  // Alg. 4
    }
    if (o.reference_benchmarks) {
      add(BenchmarkKind::kBaseline, occupancy, 0, 0);                          // Alg. 1
      add(BenchmarkKind::kCopy, occupancy, 0, 2 * word);                       // Alg. 2, Eq. 11
      add(BenchmarkKind::kFlop, occupancy, 2.0 * o.fma_per_thread.back(), 0);  // Alg. 3, Eq. 12
    }
  }
  return points;
}

}  // namespace nnergy::archline
