"""nnergy.zoo, nnergy.devices and nnergy.power_sources: what nnergy knows and finds here."""

import json
import os

from nnergy import _core
from nnergy._records import dataframe


def zoo(data_dir=None):
    """The bundled models (DataFrame): name, description, inputs, operations, unique_operations,
    parameter_count, mac_count_per_sample. data_dir: another data directory with a zoo/."""
    models = json.loads(_core.zoo_json(os.fspath(data_dir or "")))
    if isinstance(models, dict):
        models = models.get("models", [])
    return dataframe(models)


def devices(device=None, devices_file=None):
    """The device catalog as a dict (`nnergy devices --json`), or one device's entry when
    `device` (an id or alias) is given. Raises nnergy.InvalidInput for an unknown device."""
    return json.loads(_core.devices_json(device or "", os.fspath(devices_file or "")))


def power_sources():
    """The power sources present here (NVML GPUs, RAPL zones), each read once, and why the
    others are unavailable (a dict)."""
    return json.loads(_core.power_sources_json())
