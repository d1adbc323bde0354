#pragma once

// The fused-MoE parameters of the kernel model (kernel/moe_model.h) fitted on measured MoE
// layers, per engine and format, and scored leave-one-GPU-out like the GEMMs
// (calibration/kernel_fit.h); their board power, which the power model was not fitted on, is
// scored beside.

#include <vector>

#include "nnergy/calibration/kernel_fit.h"
#include "nnergy/calibration/kernel_tables.h"
#include "nnergy/device/device_catalog.h"

namespace nnergy::calibration {

/// Fits `rows` into `fit`: the parameters of every engine × format with enough rows
/// (fit.parameters.moe), their held-out and in-sample time scores (format: moe_parameters_key),
/// the power scores of the rows of at least kMinPowerKernelS with power, their ±
/// (time_log_sigma) and accuracy line (accuracy.moe).
void fit_moe(const std::vector<MeasuredMoe>& rows, const device::DeviceCatalog& catalog,
             KernelFit& fit);

}  // namespace nnergy::calibration
