"""nnergy.compare: one network on several GPUs (the compare document and a DataFrame)."""

import json
import os

from nnergy import _core
from nnergy._predict import model_source
from nnergy._records import dataframe


def compare(model, example_input=None, *, devices=None, batch=None, batches=None,
            mode="inference", precision=None, dims=None, host_launch_us=None, optimizer=None,
            devices_file=None, html=None, opset_version=None):
    """Predicts `model` on several devices and ranks them (api::compare, `nnergy compare`).

    model          a zoo name, the path of an .onnx file, or a torch.nn.Module with
                   example_input (exported as nnergy.predict does)
    devices        device ids or aliases (a list, or a comma-separated string); default: every
                   GPU of the catalog
    batch          one batch; batches: several (a batch sweep); default: the file's fixed
                   batch, else 1 (for a module, the leading dimension of example_input)
    mode, precision, dims, host_launch_us, optimizer, devices_file: as for nnergy.predict
    html           also write the self-contained HTML report to this path

    Returns a Comparison: to_dict() is the `nnergy compare --json` document; `table` (and the
    Comparison itself, which passes DataFrame attributes on) has one row per device, batch and
    clock ("boost", and the device's own "energy-optimal" clock): clock_mhz, time_s,
    time_std_s, time_per_sample_s, energy_j, energy_std_j, energy_per_sample_j,
    energy_per_sample_std_j, power_w, edp_j_s, fits_memory (false beyond the memory estimate's
    uncertainty: not ranked), may_not_fit (over the device's memory within it: ranked),
    memory_peak_bytes, host_bound, pareto, rank_time, rank_energy, rank_edp, rank_power, and
    the device's name, time_model ("calibrated", "transferred", "estimated"), power_model and
    provenance. Every figure is predicted by the analytical model; .notes says how, .context
    holds the context block. Raises nnergy.InvalidInput for bad arguments.
    """
    if batch is not None and batches is not None:
        raise _core.InvalidInput("batch and batches: choose one")
    if isinstance(devices, str):
        devices = [d.strip() for d in devices.split(",")]
    batch_list = [batch] if batch is not None else list(batches or [])
    source = model_source(model, example_input, mode=mode, opset_version=opset_version)
    if not batch_list and source.example_batch is not None:
        batch_list = [source.example_batch]
    try:
        document = json.loads(_core.compare_json(
            source.path, devices=list(devices or []), batches=[int(b) for b in batch_list],
            mode=mode, precision=precision, dims=dict(dims or {}), host_launch_us=host_launch_us,
            optimizer=optimizer, devices_file=os.fspath(devices_file or ""),
            html=os.fspath(html or ""), command_line=f"nnergy.compare({source.shown})"))
    finally:
        if source.directory is not None:
            source.directory.cleanup()
    return Comparison(document)


class Comparison:
    """What nnergy.compare returns: the document of `nnergy compare --json` (to_dict(),
    to_json()) and its rows as a DataFrame (`table`, one row per device, batch and clock, with
    the device's name, time_model, power_model and provenance). Every other attribute, indexing
    and len() are the table's, so `c["energy_j"]`, `c.sort_values("energy_j")` and
    `c[c.fits_memory]` work as on a DataFrame; `notes`, `context` and `devices` are the
    document's."""

    def __init__(self, document):
        self._document = document
        by_id = {d["id"]: d for d in document["devices"]}
        rows = []
        for row in document["rows"]:
            d = by_id[row["device"]]
            rows.append(dict(row, name=d["name"], time_model=d["time_model"],
                             power_model=d["power_model"], provenance=d["provenance"]))
        self.table = dataframe(rows)
        self.table.attrs["notes"] = document["notes"]
        self.table.attrs["context"] = document["context"]
        self.table.attrs["devices"] = document["devices"]

    notes = property(lambda self: list(self._document["notes"]))
    context = property(lambda self: dict(self._document["context"]))
    devices = property(lambda self: [dict(d) for d in self._document["devices"]])

    def to_dict(self):
        """The document `nnergy compare --json` prints for the same request."""
        return json.loads(json.dumps(self._document))

    def to_json(self, indent=None):
        return json.dumps(self._document, indent=indent)

    def __getattr__(self, name):
        if name.startswith("_") or name == "table":
            raise AttributeError(name)
        return getattr(self.table, name)

    def __getitem__(self, key):
        return self.table[key]

    def __len__(self):
        return len(self.table)

    def __iter__(self):
        return iter(self.table)

    def _repr_html_(self):
        return self.table._repr_html_()

    def __repr__(self):
        return repr(self.table)
