#pragma once

#include <pybind11/pybind11.h>

// The parts of the extension module `nnergy._core`, one function per file; module.cc calls them.
// Every binding converts Python arguments into an api:: request (settings named as keywords,
// SettingNames::kKeyword) and returns the result object, whose JSON backs the Python classes.
namespace nnergy::python {

/// nnergy.Error and its subclasses InvalidInput (also a ValueError), DeviceError, RuntimeFailure
/// and InternalError (errors.cc), and the translation of the C++ exceptions into them, with the
/// C++ message unchanged.
void bind_errors(pybind11::module_& module);

/// predict() and PredictionReport (predict_binding.cc).
void bind_predict(pybind11::module_& module);
/// nnergy._core.compare_json (api::compare).
void bind_compare(pybind11::module_& module);

/// serve(), ServeReport and list_models_json() (serve_binding.cc).
void bind_serve(pybind11::module_& module);

/// kernel_gemm_json(), kernel_attention_json() and kernel_collective_json() (kernel_binding.cc).
void bind_kernel(pybind11::module_& module);

/// PowerMeter: in-process measurement windows (power_meter_binding.cc).
void bind_power_meter(pybind11::module_& module);

/// account() and AccountingReport (account_binding.cc).
void bind_account(pybind11::module_& module);

/// zoo(), devices() and power_sources() (catalog_binding.cc).
void bind_catalog(pybind11::module_& module);

}  // namespace nnergy::python
