#include "nnergy/calibration/attention_fit.h"

#include <fmt/format.h>

#include <cmath>

#include "nnergy/calibration/grouped_fit.h"

namespace nnergy::calibration {

namespace {

using Eigen::VectorXd;
using kernel::AttentionParameters;

constexpr int kAttentionParameters = 7;

AttentionParameters decode(const VectorXd& x) {
  AttentionParameters p;
  p.compute_efficiency = logistic(x[0]);
  p.exp_efficiency = std::exp(x[1]);
  p.memory_efficiency = logistic(x[2]);
  p.latency_s = std::exp(x[3]);
  p.cta_s = std::exp(x[4]);
  p.overlap_loss = logistic(x[5]);
  p.saturating_ctas = std::exp(x[6]);
  return p;
}

VectorXd encode(const AttentionParameters& p) {
  VectorXd x(kAttentionParameters);
  x << logit(p.compute_efficiency), std::log(p.exp_efficiency), logit(p.memory_efficiency),
      std::log(p.latency_s), std::log(p.cta_s), logit(p.overlap_loss), std::log(p.saturating_ctas);
  return x;
}

}  // namespace

void fit_attention(const std::vector<MeasuredAttention>& rows, const device::DeviceCatalog& catalog,
                   KernelFit& fit) {
  GroupedFit<MeasuredAttention, AttentionParameters> spec;
  spec.parameter_count = kAttentionParameters;
  spec.decode = decode;
  spec.encode = encode;
  spec.group = [](const MeasuredAttention& r) {
    return std::pair{r.engine, kernel::attention_parameters_key(r.shape.phase, r.format)};
  };
  spec.time = [&catalog](const MeasuredAttention& r, const AttentionParameters& p) {
    const device::DeviceSpec& d = catalog.find(r.device_id);
    return kernel::attention_time_s(d, r.shape, r.format, p, d.clock.boost_mhz);
  };
  spec.lookup = [](const kernel::KernelParameters& k, const MeasuredAttention& r) {
    return k.attention_for(r.shape.phase, r.format, r.engine);
  };
  spec.store = [](kernel::KernelParameters& k, const std::string& engine, const std::string& key,
                  const AttentionParameters& p) { k.attention[engine][key] = p; };
  spec.kernels = "attention kernels";
  spec.accuracy_what = "Attention time";
  fit.parameters.accuracy.attention = fit_grouped(rows, spec, AttentionParameters{}, fit);
  fit.attention_rows = static_cast<int>(rows.size());
  if (!rows.empty())
    fit.parameters.provenance +=
        fmt::format("; attention: {} measured prefill and decode kernels", rows.size());
}

}  // namespace nnergy::calibration
