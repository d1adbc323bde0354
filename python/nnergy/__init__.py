"""nnergy: predict and measure the time, power and energy of neural networks on GPUs.

The library's entry points (the same ones the `nnergy` command runs) as Python calls, with
results as Python objects and pandas DataFrames:

    nnergy.predict(model, example_input=None, device=..., batch=..., mode=..., precision=...)
    nnergy.compare(model, devices=[...], batches=[...])  which GPU, which clock (a Comparison:
                                           the compare document, its rows a DataFrame)
    nnergy.serve("meta-llama/Llama-3.1-8B-Instruct", device="h100", input_tokens=1000,
                 output_tokens=200)     energy per token of serving a language model
    nnergy.language_models()               the language models serve knows (DataFrame)
    nnergy.kernel("gemm", m=8192, n=16384, k=16384, device="b200")
                                           one kernel's time, power and energy (also "attention")
    nnergy.Monitor(sources=...)            measurement windows (with, begin_window/end_window)
    @nnergy.measure                        a function's time and energy per call
    nnergy.session(model, "run1")          record a PyTorch run for nnergy.account
    nnergy.account("run1")                 where the energy of a recorded run went
    nnergy.EnergyLogger("energy.csv")      energy, kWh and CO2e per training step and epoch
    nnergy.zoo(), nnergy.devices(), nnergy.power_sources()

Errors are nnergy.InvalidInput (also a ValueError), nnergy.DeviceError, nnergy.RuntimeFailure and
nnergy.InternalError, all subclasses of nnergy.Error, with the library's messages. Importing
nnergy imports neither torch nor pandas; they are imported by the calls that need them.
See python/README.md.
"""

import os as _os
import sys as _sys


def _installed_prefix():
    """The environment's prefix when this package was installed into it (pip install .), with
    the data at <prefix>/share/nnergy and the executable at <prefix>/bin/nnergy; else None (run
    from a build tree)."""
    here = _os.path.realpath(_os.path.dirname(__file__))
    prefix = _os.path.realpath(_sys.prefix)
    data = _os.path.join(prefix, "share", "nnergy", "devices.json")
    if here.startswith(prefix + _os.sep) and _os.path.isfile(data):
        return prefix
    return None


# The extension runs inside python, so the library cannot find an installed data folder next to
# its executable: it is named here (core/data_directory.h), unless the user named one.
_prefix = _installed_prefix()
if _prefix and not _os.environ.get("NNERGY_DATA_DIR"):
    _os.environ["NNERGY_DATA_DIR"] = _os.path.join(_prefix, "share", "nnergy")

try:
    from nnergy import _core
except ImportError as e:  # the pure-Python sources without the built extension module
    raise ImportError(
        "nnergy: the extension module nnergy._core is not importable (" + str(e) + "); build it "
        "with `cmake --build build/release -j2 --target python` and put build/release/python, "
        "not python/, on PYTHONPATH: PYTHONPATH=build/release/python /usr/bin/python3; or install "
        "it with `pip install .` (python/README.md)"
    ) from e

from nnergy._core import DeviceError, Error, InternalError, InvalidInput, RuntimeFailure
from nnergy._predict import ClockSweep, Prediction, predict
from nnergy._compare import Comparison, compare
from nnergy._serve import Serving, ServeTotals, language_models, serve
from nnergy._kernel import Kernel, KernelTotals, kernel
from nnergy._monitor import Measurement, Monitor, Window, measure
from nnergy._account import Accounting, Footprint, account, session
from nnergy._energy_logger import EnergyLogger
from nnergy._catalog import devices, power_sources, zoo

__all__ = [
    "Accounting", "ClockSweep", "Comparison", "DeviceError", "EnergyLogger", "Error", "Footprint",
    "InternalError", "InvalidInput", "Kernel", "KernelTotals", "Measurement", "Monitor", "Prediction", "RuntimeFailure",
    "ServeTotals", "Serving", "Window", "account", "compare", "devices", "language_models",
    "kernel", "measure", "power_sources", "predict", "serve", "session", "zoo",
]
