#pragma once

// The fused-attention parameters of the kernel model (kernel/attention_model.h) fitted on
// measured prefill and decode attention kernels, per engine, phase and format, and scored
// leave-one-GPU-out like the GEMMs (calibration/kernel_fit.h).

#include <vector>

#include "nnergy/calibration/kernel_fit.h"
#include "nnergy/calibration/kernel_tables.h"
#include "nnergy/device/device_catalog.h"

namespace nnergy::calibration {

/// Fits `rows` into `fit`: the parameters of every engine × phase × format with enough rows
/// (fit.parameters.attention), their held-out and in-sample scores (format: the attention key),
/// their ± (time_log_sigma) and accuracy line (accuracy.attention).
void fit_attention(const std::vector<MeasuredAttention>& rows, const device::DeviceCatalog& catalog,
                   KernelFit& fit);

}  // namespace nnergy::calibration
