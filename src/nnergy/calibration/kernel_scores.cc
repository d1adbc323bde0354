#include "nnergy/calibration/kernel_scores.h"

#include <fmt/format.h>

#include <cmath>
#include <map>
#include <set>

#include "nnergy/core/statistics.h"

namespace nnergy::calibration {

KernelScore score_of(const std::string& device, const std::string& engine,
                     const std::string& format, const std::string& quantity,
                     const std::vector<double>& ratios) {
  KernelScore s{device, engine, format, quantity, static_cast<int>(ratios.size())};
  if (ratios.empty()) return s;
  double sum = 0;
  double sum_log = 0;
  for (double r : ratios) {
    sum += std::abs(r - 1);
    sum_log += std::log(r);
  }
  s.mape = sum / ratios.size();
  s.median_ratio = statistics::median(ratios);
  const double mean_log = sum_log / ratios.size();
  double var = 0;
  for (double r : ratios) var += (std::log(r) - mean_log) * (std::log(r) - mean_log);
  s.log_sigma = std::sqrt(var / ratios.size());
  return s;
}

// ln-ratio RMS of `quantity` over the scores (weighted by their counts), per format or all.
double pooled_log_rms(const std::vector<KernelScore>& scores, const std::string& quantity,
                      const std::string& format) {
  double sum = 0;
  int count = 0;
  for (const KernelScore& s : scores) {
    if (s.quantity != quantity || (!format.empty() && s.format != format)) continue;
    const double bias = std::log(s.median_ratio);
    sum += s.count * (s.log_sigma * s.log_sigma + bias * bias);
    count += s.count;
  }
  return count > 0 ? std::sqrt(sum / count) : 0;
}

std::string accuracy_line(const std::vector<KernelScore>& scores, const std::string& quantity,
                          const std::string& what) {
  std::map<std::string, std::pair<double, int>> by_format;
  double sum = 0;
  int count = 0;
  std::set<std::string> gpus;
  for (const KernelScore& s : scores) {
    if (s.quantity != quantity) continue;
    by_format[s.format].first += s.mape * s.count;
    by_format[s.format].second += s.count;
    sum += s.mape * s.count;
    count += s.count;
    gpus.insert(s.device_id);
  }
  if (count == 0) return "";
  std::string formats;
  for (const auto& [f, v] : by_format)
    formats +=
        fmt::format("{}{} {:.1f} %", formats.empty() ? "" : ", ", f, 100 * v.first / v.second);
  return fmt::format("{} leave-one-GPU-out MAPE {:.1f} % over {} kernels of {} GPUs ({})", what,
                     100 * sum / count, count, gpus.size(), formats);
}

}  // namespace nnergy::calibration
