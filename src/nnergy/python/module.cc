// The extension module nnergy._core: the library's entry points (api::) for the Python package
// python/nnergy, which wraps the results in Python objects and DataFrames.
#include <pybind11/pybind11.h>

#include "bindings.h"
#include "nnergy/core/carbon.h"
#include "nnergy/graph/onnx_importer.h"

#ifndef NNERGY_CLI_PATH
#define NNERGY_CLI_PATH ""
#endif

PYBIND11_MODULE(_core, module) {
  module.doc() =
      "nnergy's library entry points (predict, compare, serve, kernel, account, power meter, "
      "catalogs)";
  nnergy::python::bind_errors(module);
  nnergy::python::bind_predict(module);
  nnergy::python::bind_compare(module);
  nnergy::python::bind_serve(module);
  nnergy::python::bind_kernel(module);
  nnergy::python::bind_power_meter(module);
  nnergy::python::bind_account(module);
  nnergy::python::bind_catalog(module);
  // The newest ONNX opset the importer's ONNX library knows (an export at a newer one would use
  // operator versions it cannot infer shapes for).
  module.attr("max_onnx_opset") = nnergy::graph::newest_importable_opset();
  // The nnergy executable of the same build (the tests compare its --json with this module's).
  module.attr("cli_path") = NNERGY_CLI_PATH;
  // The carbon intensity used when none is given, g CO2e per kWh, and how outputs name it.
  module.attr("default_grid_gco2e_per_kwh") = nnergy::kWorldGridGco2ePerKwh;
  module.attr("default_grid_source") = nnergy::kWorldGridSource;
}
