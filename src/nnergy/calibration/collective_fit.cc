#include "nnergy/calibration/collective_fit.h"

#include <fmt/format.h>

#include <cmath>

#include "nnergy/calibration/grouped_fit.h"

namespace nnergy::calibration {

namespace {

using Eigen::VectorXd;
using kernel::CollectiveParameters;

constexpr int kCollectiveParameters = 3;

}  // namespace

void fit_collectives(const std::vector<MeasuredCollective>& rows,
                     const device::DeviceCatalog& catalog, KernelFit& fit) {
  GroupedFit<MeasuredCollective, CollectiveParameters> spec;
  spec.parameter_count = kCollectiveParameters;
  // The library's one-shot choice is not fitted: it is what its kernels do.
  const auto one_shot = [](const std::string& library) { return library != "nccl"; };
  spec.encode = [](const CollectiveParameters& p) {
    VectorXd x(kCollectiveParameters);
    x << std::log(p.latency_s), std::log(p.step_s), std::log(p.efficiency);
    return x;
  };
  spec.group = [&catalog](const MeasuredCollective& r) {
    const kernel::CollectiveLink link =
        kernel::collective_link(catalog.find(r.device_id), r.shape.gpus);
    return std::pair{r.library, kernel::collective_parameters_key(r.shape.op, link.pcie)};
  };
  // The decoded parameters carry no library; time() sets one_shot from the row's.
  spec.decode = [](const VectorXd& x) {
    CollectiveParameters p;
    p.latency_s = std::exp(x[0]);
    p.step_s = std::exp(x[1]);
    p.efficiency = std::exp(x[2]);
    return p;
  };
  spec.time = [&catalog, one_shot](const MeasuredCollective& r, CollectiveParameters p) {
    p.one_shot = one_shot(r.library);
    return kernel::collective_time_s(
        r.shape, kernel::collective_link(catalog.find(r.device_id), r.shape.gpus), p);
  };
  spec.lookup = [&catalog](const kernel::KernelParameters& k, const MeasuredCollective& r) {
    const kernel::CollectiveLink link =
        kernel::collective_link(catalog.find(r.device_id), r.shape.gpus);
    return k.collective_for(r.library, kernel::collective_parameters_key(r.shape.op, link.pcie));
  };
  spec.store = [one_shot](kernel::KernelParameters& k, const std::string& library,
                          const std::string& key, CollectiveParameters p) {
    p.one_shot = one_shot(library);
    k.collective[library][key] = p;
  };
  spec.kernels = "collectives";
  spec.sigma_prefix = "collective ";
  spec.accuracy_what = "Collective time";
  fit.parameters.accuracy.collective = fit_grouped(rows, spec, CollectiveParameters{}, fit);
  fit.collective_rows = static_cast<int>(rows.size());
  if (!rows.empty())
    fit.parameters.provenance +=
        fmt::format("; collectives: {} measured NCCL and engine all-reduce kernels", rows.size());
}

}  // namespace nnergy::calibration
