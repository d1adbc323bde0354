#pragma once

// The collective parameters of the kernel model (kernel/collective_model.h) fitted on measured
// NCCL collectives and engines' custom all-reduce kernels, per library, op and link kind, and
// scored leave-one-GPU-out like the GEMMs (calibration/kernel_fit.h).

#include <vector>

#include "nnergy/calibration/kernel_fit.h"
#include "nnergy/calibration/kernel_tables.h"
#include "nnergy/device/device_catalog.h"

namespace nnergy::calibration {

/// Fits `rows` into `fit`: the parameters of every library × op × link with enough rows
/// (fit.parameters.collective), their held-out and in-sample scores (format: "collective " and
/// the key), their ± and accuracy line (accuracy.collective).
void fit_collectives(const std::vector<MeasuredCollective>& rows,
                     const device::DeviceCatalog& catalog, KernelFit& fit);

}  // namespace nnergy::calibration
