"""nnergy.session and nnergy.account: record a PyTorch run, then attribute its energy to its
operators, layers and modules (api::account, as `nnergy account` does)."""

import json
import os
import sys

from nnergy import _core
from nnergy._records import dataframe


class _PowerRecorder:
    """nnergy_torch's power recorder on this package's power meter (api::PowerMeter): samples in
    this process and writes the session's power.csv as `nnergy monitor -o` would."""

    def __init__(self):
        self._meter = None

    def start(self, path, sources, interval_ms):
        period = {} if interval_ms is None else {"interval_ms": float(interval_ms)}
        self._meter = _core.PowerMeter(list(sources or []), trace_file=os.fspath(path),
                                       command_line="nnergy.session", **period)

    def stop(self):
        self._meter.stop()
        return list(self._meter.warnings())


def session(model, out, power_sources=None, nnergy_bin=None, power_devices=None,
            interval_ms=None):
    """Records a PyTorch run for nnergy.account: nnergy_torch.session (module hooks and the torch
    profiler) with this package's power meter sampling the power in process, writing the
    directory `out` (trace.json, power.csv, session.json).

        with nnergy.session(model, "run1", power_sources=["synthetic:constant=100"]) as s:
            for batch in data:
                train_step(batch)
                s.step()
        fp = nnergy.account("run1")

    power_sources: as for Monitor (default: detected); power_devices: {source id: "cpu" |
    "gpu:N"}; interval_ms: sampling period (default 20); nnergy_bin: sample with this `nnergy`
    executable's `nnergy monitor` in a child process instead. Raises nnergy.InvalidInput when `model`
    is not a torch.nn.Module, and for a malformed source or interval (nnergy.DeviceError for a
    named source absent here)."""
    torch = sys.modules.get("torch")
    if torch is None or not isinstance(model, torch.nn.Module):
        raise _core.InvalidInput(
            "model: expected a torch.nn.Module (its modules are hooked to name the operators), "
            f"found {type(model).__module__}.{type(model).__qualname__}")
    import nnergy_torch
    recorder = None if nnergy_bin else _PowerRecorder()
    return nnergy_torch.session(model, os.fspath(out), power_sources,
                                os.fspath(nnergy_bin) if nnergy_bin else None, power_devices,
                                interval_ms, power_recorder=recorder)


class Footprint:
    """Where one run's energy went (Smaragdine's energy accounting):

    by_op     DataFrame of the tensor energy footprint (TEF): one row per operator and its module
              path (name, energy_j, time_s, power_w, forward/backward/other energy, CPU/GPU
              energy, event_count); also `tef`
    by_layer  the TEF summarized into layers and modules (STEF); also `stef`
    edd       the energy distribution diagram: a tree {name, energy_j, time_s, children}
    hotspots(n, by)  the n STEF rows with the most energy_j (or power_w)
    devices   conservation per device: measured, attributed and idle energy
    warnings  what the accounting could not use"""

    def __init__(self, run):
        self._run = run

    label = property(lambda self: self._run["label"])
    has_power = property(lambda self: self._run["has_power"])
    warnings = property(lambda self: list(self._run["warnings"]))
    devices = property(lambda self: json.loads(json.dumps(self._run["devices"])))
    edd = property(lambda self: json.loads(json.dumps(self._run["edd"])))
    summarize_rules = property(lambda self: list(self._run["summarize_rules"]))

    @property
    def tef(self):
        return dataframe(self._run["tef"]["entries"])

    @property
    def stef(self):
        return dataframe(self._run["stef"]["entries"])

    by_op = tef
    by_layer = stef

    def hotspots(self, n=10, by="energy_j"):
        """The `n` summarized entries (STEF) with the most `by` ("energy_j" or "power_w")."""
        if by not in ("energy_j", "power_w"):
            raise _core.InvalidInput(f"by={by!r}: expected 'energy_j' or 'power_w'")
        return self.stef.sort_values(by, ascending=False).head(n).reset_index(drop=True)

    def to_dict(self):
        return json.loads(json.dumps(self._run))

    def to_json(self, indent=None):
        return json.dumps(self._run, indent=indent)

    def __repr__(self):
        total = self._run["edd"]["energy_j"]
        return (f"Footprint({self.label!r}: {total:.4g} J attributed over "
                f"{len(self._run['stef']['entries'])} summarized entries)")


class Accounting:
    """What nnergy.account returns: one Footprint per run (`runs`), the assessment when asked,
    text(). With one run, its Footprint's fields are also this object's (tef, stef, by_op,
    by_layer, edd, hotspots, devices, warnings)."""

    def __init__(self, report):
        self._report = report
        # The document of `nnergy account --json`: one run's accounting, or {context, runs,
        # assessment} for several.
        self._dict = json.loads(report.to_json())
        runs = self._dict["runs"] if "runs" in self._dict else [self._dict]
        self.runs = [Footprint(r) for r in runs]

    @property
    def assessment(self):
        """{widening, pairwise} when several runs were accounted with assess=True, else None."""
        return self._dict.get("assessment")

    @property
    def context(self):
        return dict(self._dict["context"])

    def __getattr__(self, name):
        if name.startswith("_") or not hasattr(Footprint, name):
            raise AttributeError(name)
        if len(self.runs) != 1:
            raise _core.InvalidInput(
                f"{name}: this accounting has {len(self.runs)} runs; use .runs[i].{name}")
        return getattr(self.runs[0], name)

    def text(self, level=2, top=25):
        """The text report of `nnergy account` (level: EDD levels; top: rows, 0 for all)."""
        return self._report.render_text(level, top)

    def to_dict(self):
        """The document `nnergy account --json` prints for the same runs."""
        return json.loads(json.dumps(self._dict))

    def to_json(self, indent=None):
        return json.dumps(self._dict, indent=indent)

    def __str__(self):
        return self.text()

    def __repr__(self):
        return f"Accounting({', '.join(repr(r) for r in self.runs)})"


def account(runs=None, *, trace_files=(), power_files=(), offset_us=None, power_devices=None,
            interpolate=False, summarize=(), default_rules=True, assess=False, max_factor=8,
            json_file=None, csv_file=None, folded_file=None, perfetto_file=None):
    """Attributes recorded runs' energy to operators, layers and modules (api::account).

    runs           a session directory (nnergy.session, with session.json) or a list of them
    trace_files, power_files  further program traces (Chrome/Kineto JSON, torch 1.13 traces,
                   TF1 timelines) and power traces (`nnergy monitor` CSV/JSON, nvidia-smi logs)
    offset_us      UNIX time of the traces' time 0, µs (overrides theirs and the session's)
    power_devices  {source id: "cpu" | "gpu:N" | "none"}
    interpolate    linear power between samples (else the latest sample's)
    summarize      "REGEX=REPLACEMENT" rules applied before the default ones (default_rules)
    assess         accounting precision (ASSS per run; ASSW and similarity across runs)
    json_file, csv_file, folded_file, perfetto_file: also write these (one run only)

    Returns an Accounting. Raises nnergy.InvalidInput for unreadable or inconsistent inputs."""
    if runs is None:
        runs = []
    elif isinstance(runs, (str, os.PathLike)):
        runs = [runs]
    shown = ", ".join(repr(os.fspath(r)) for r in runs)
    report = _core.account(
        [os.fspath(r) for r in runs], trace_files=[os.fspath(p) for p in trace_files],
        power_files=[os.fspath(p) for p in power_files], offset_us=offset_us,
        power_devices=dict(power_devices or {}), interpolate=interpolate,
        summarize=list(summarize), default_rules=default_rules, assess=assess,
        max_factor=max_factor, json_file=os.fspath(json_file or ""),
        csv_file=os.fspath(csv_file or ""), folded_file=os.fspath(folded_file or ""),
        perfetto_file=os.fspath(perfetto_file or ""),
        command_line=f"nnergy.account({shown})")
    return Accounting(report)
