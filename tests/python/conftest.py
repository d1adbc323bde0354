"""pytest setup of the nnergy package tests: they run with PYTHONPATH=<build>/python (ctest sets
it), with the machine's NVML and RAPL hidden so that only the sources a test names are used."""

import os

os.environ.setdefault("NNERGY_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1")
os.environ.setdefault("NNERGY_POWERCAP_ROOT", "/nonexistent/powercap")
