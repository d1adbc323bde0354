#include "nnergy/calibration/moe_fit.h"

#include <fmt/format.h>

#include <map>
#include <set>
#include <tuple>

#include "nnergy/calibration/grouped_fit.h"

namespace nnergy::calibration {

namespace {

// The quantity the MoE layers' power scores go by: the power model never saw a MoE layer.
constexpr const char* kUnfittedPower = "power, not fitted";

}  // namespace

void fit_moe(const std::vector<MeasuredMoe>& rows, const device::DeviceCatalog& catalog,
             KernelFit& fit) {
  if (rows.empty()) return;
  GroupedFit<MeasuredMoe, kernel::GemmParameters> spec;
  spec.parameter_count = kGemmParameterCount;
  spec.encode = encode_gemm_parameters;
  spec.decode = decode_gemm_parameters;
  spec.group = [](const MeasuredMoe& r) {
    return std::pair{r.engine, std::string(kernel::info(r.format).name)};
  };
  spec.time = [&catalog](const MeasuredMoe& r, const kernel::GemmParameters& p) {
    const device::DeviceSpec& device = catalog.find(r.device_id);
    return kernel::moe_time_s(device, r.shape, r.format, p, device.clock.boost_mhz);
  };
  spec.lookup = [](const kernel::KernelParameters& k, const MeasuredMoe& r) {
    return k.moe_for(r.format, r.engine);
  };
  spec.store = [](kernel::KernelParameters& k, const std::string& engine, const std::string& format,
                  const kernel::GemmParameters& p) { k.moe[engine][format] = p; };
  spec.kernels = "MoE layers";
  spec.sigma_prefix = "moe ";
  spec.accuracy_what = "MoE layer time";
  std::string accuracy = fit_grouped(rows, spec, kernel::GemmParameters{}, fit);
  fit.moe_rows = static_cast<int>(rows.size());

  // Power: the power model as fitted on GEMMs and decode attention, MoE layers never seen.
  std::map<std::tuple<std::string, std::string, std::string>, std::vector<double>> power;
  for (const MeasuredMoe& r : rows) {
    if (!r.power_w || r.latency_s < kMinPowerKernelS) continue;
    const kernel::KernelEstimate e =
        kernel::predict_moe(catalog.find(r.device_id), r.shape, r.format, fit.parameters, r.engine);
    power[{r.device_id, r.engine, kernel::moe_parameters_key(r.format)}].push_back(e.power_w /
                                                                                   *r.power_w);
  }
  std::vector<KernelScore> power_scores;
  std::vector<double> all_ratios;
  std::set<std::string> gpus;
  for (const auto& [key, ratios] : power) {
    power_scores.push_back(
        score_of(std::get<0>(key), std::get<1>(key), std::get<2>(key), kUnfittedPower, ratios));
    all_ratios.insert(all_ratios.end(), ratios.begin(), ratios.end());
    gpus.insert(std::get<0>(key));
  }
  fit.out_of_sample.insert(fit.out_of_sample.end(), power_scores.begin(), power_scores.end());
  if (!all_ratios.empty()) {
    const KernelScore pooled = score_of("", "", "", kUnfittedPower, all_ratios);
    accuracy += fmt::format(
        "; MoE board power (a power model fitted on GEMMs and decode attention, never on MoE "
        "layers): MAPE {:.1f} %, median ratio {:.2f}, over {} layers of {} GPUs",
        100 * pooled.mape, pooled.median_ratio, pooled.count, gpus.size());
  }
  fit.parameters.accuracy.moe = accuracy;
  fit.parameters.provenance += fmt::format(
      "; MoE layers: {} measured fused MoE layers (TensorRT-LLM and vLLM)", rows.size());
}

}  // namespace nnergy::calibration
