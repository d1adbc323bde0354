#pragma once

// How the kernel model's fits are judged: predicted/measured ratios summarised per GPU, kernel
// format and engine (MAPE, median ratio, spread), pooled into the ± the model reports and into
// one line of accuracy for the outputs' notes.

#include <string>
#include <vector>

namespace nnergy::calibration {

/// Accuracy of one group of predictions (one GPU, format and engine).
struct KernelScore {
  std::string device_id;
  std::string engine;
  std::string format;    ///< a GEMM format or an attention key ("attention decode bf16/fp8")
  std::string quantity;  ///< "time" or "power"
  int count = 0;
  double mape = 0;          ///< mean |predicted/measured − 1|
  double median_ratio = 0;  ///< median predicted/measured
  double log_sigma = 0;     ///< standard deviation of ln(predicted/measured)
};

/// The score of predicted/measured `ratios` (none: a score of count 0).
KernelScore score_of(const std::string& device, const std::string& engine,
                     const std::string& format, const std::string& quantity,
                     const std::vector<double>& ratios);

/// ln-ratio RMS (spread and median bias) of `quantity` over `scores`, weighted by their counts,
/// for `format` or (empty) all: the relative 1σ a prediction carries.
double pooled_log_rms(const std::vector<KernelScore>& scores, const std::string& quantity,
                      const std::string& format);

/// "WHAT leave-one-GPU-out MAPE 9.8 % over N kernels of G GPUs (per format …)"; empty when
/// `scores` hold no `quantity`.
std::string accuracy_line(const std::vector<KernelScore>& scores, const std::string& quantity,
                          const std::string& what);

}  // namespace nnergy::calibration
