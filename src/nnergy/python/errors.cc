#include <Python.h>

#include <exception>
#include <string>

#include "bindings.h"
#include "nnergy/core/error.h"

namespace nnergy::python {

namespace {

namespace py = pybind11;

// The exception classes live as long as the interpreter; they are created once per process.
PyObject* error_class = nullptr;
PyObject* invalid_input_class = nullptr;
PyObject* device_error_class = nullptr;
PyObject* runtime_failure_class = nullptr;
PyObject* internal_error_class = nullptr;

PyObject* new_class(py::module_& module, const char* name, const char* doc, PyObject* bases) {
  const std::string qualified = std::string("nnergy.") + name;
  PyObject* cls = PyErr_NewExceptionWithDoc(qualified.c_str(), doc, bases, nullptr);
  if (cls == nullptr) throw py::error_already_set();
  module.add_object(name, py::handle(cls));
  return cls;
}

PyObject* with_base(PyObject* base, PyObject* builtin) {
  PyObject* bases = PyTuple_Pack(2, base, builtin);
  if (bases == nullptr) throw py::error_already_set();
  return bases;
}

}  // namespace

void bind_errors(py::module_& module) {
  error_class = new_class(module, "Error", "Base class of the errors nnergy raises.", nullptr);
  invalid_input_class =
      new_class(module, "InvalidInput",
                "Bad input: an argument, a file or a data value. The message names the argument, "
                "what was expected, what was found and what to do.",
                with_base(error_class, PyExc_ValueError));
  device_error_class =
      new_class(module, "DeviceError",
                "A device or power source is unavailable or a device call (CUDA, NVML) failed.",
                with_base(error_class, PyExc_RuntimeError));
  runtime_failure_class =
      new_class(module, "RuntimeFailure",
                "The environment failed at run time (a system call), not the input.",
                with_base(error_class, PyExc_RuntimeError));
  internal_error_class = new_class(module, "InternalError",
                                   "A broken invariant inside nnergy: a bug, never the input.",
                                   with_base(error_class, PyExc_RuntimeError));

  py::register_exception_translator([](std::exception_ptr thrown) {
    try {
      if (thrown) std::rethrow_exception(thrown);
    } catch (const InvalidInput& e) {
      PyErr_SetString(invalid_input_class, e.what());
    } catch (const DeviceError& e) {
      PyErr_SetString(device_error_class, e.what());
    } catch (const RuntimeFailure& e) {
      PyErr_SetString(runtime_failure_class, e.what());
    } catch (const InternalError& e) {
      PyErr_SetString(internal_error_class, e.what());
    }
  });
}

}  // namespace nnergy::python
