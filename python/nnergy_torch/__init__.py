"""nnergy_torch: record a PyTorch run for `nnergy account` (energy accounting, seed 001).

    import nnergy_torch
    with nnergy_torch.session(model, out="run1"):
        for step in range(5):
            train_step()

writes run1/trace.json (program trace), run1/power.csv (`nnergy monitor -o`) and
run1/session.json (how the two clocks relate). Then: `nnergy account run1`.

Works with Debian's torch 1.13 (legacy autograd profiler, no Kineto) and with newer torch
(Kineto). Pure Python; no compiled parts.
"""

from __future__ import annotations

import json
import os
import pathlib
import shutil
import subprocess
import time
import warnings
from typing import Optional, Sequence

import torch

__all__ = ["session", "Session", "find_nnergy", "SESSION_FORMAT_VERSION"]

SESSION_FORMAT_VERSION = 1
MODULE_PREFIX = "module::"
MARKER_NAME = "nnergy::marker"


def find_nnergy(nnergy_bin: Optional[str] = None) -> str:
    """The nnergy executable: the argument, else $NNERGY_BIN, else `nnergy` on PATH."""
    for candidate in (nnergy_bin, os.environ.get("NNERGY_BIN")):
        if candidate:
            if not (os.path.isfile(candidate) and os.access(candidate, os.X_OK)):
                raise FileNotFoundError(f"nnergy binary {candidate!r}: not an executable file")
            return candidate
    found = shutil.which("nnergy")
    if found is None:
        raise FileNotFoundError(
            "nnergy binary: not given, $NNERGY_BIN unset and `nnergy` not on PATH")
    return found


def _module_hooks(model: torch.nn.Module):
    """Forward pre/post hooks that wrap every named module in a record_function range named
    "module::<Class>.<qualified.name>", so that the trace carries the module hierarchy."""
    handles = []
    root = type(model).__name__
    open_ranges = {}

    def names():
        for name, module in model.named_modules():
            yield (root if name == "" else f"{root}.{name}"), module

    for qualified, module in names():
        def pre_hook(mod, inputs, _qualified=qualified):
            record = torch.autograd.profiler.record_function(MODULE_PREFIX + _qualified)
            record.__enter__()
            # A module may be re-entered (shared modules, recursion): keep a stack per module.
            open_ranges.setdefault(id(mod), []).append(record)

        def post_hook(mod, inputs, output):
            stack = open_ranges.get(id(mod))
            if stack:
                stack.pop().__exit__(None, None, None)

        handles.append(module.register_forward_pre_hook(pre_hook))
        handles.append(module.register_forward_hook(post_hook))
    return handles


def _export_trace(profiler, path: pathlib.Path) -> str:
    """Writes the program trace and returns its format name.

    With torch 1.13's legacy profiler, the exported Chrome trace has empty args; nnergy needs
    the autograd sequence numbers to tie backward ops to the module of their forward op, so the
    trace is written here from the profiler's events with args["Sequence number"] added (same
    ts/dur/tid as export_chrome_trace). Kineto traces already carry them and are exported as is.
    """
    events = getattr(profiler, "function_events", None)
    if events is None or _is_kineto(profiler):
        profiler.export_chrome_trace(str(path))
        return "chrome"
    records = []
    for e in events:
        args = {}
        seq = getattr(e, "sequence_nr", -1)
        if seq is not None and seq >= 0:
            args["Sequence number"] = int(seq)
            args["Fwd thread id"] = int(getattr(e, "fwd_thread", 0) or 0)
        records.append({
            "name": e.name,
            "ph": "X",
            "ts": e.time_range.start,
            "dur": e.time_range.end - e.time_range.start,
            "tid": int(e.thread),
            "pid": "CPU functions",
            "args": args,
        })
    with open(path, "w") as f:
        json.dump(records, f)
    return "torch-legacy"


def _new_profiler():
    """The autograd profiler, recording the GPU's kernels too when CUDA is available. Without
    that, torch 2.x records only the CPU side of a CUDA run (the launches and their flow events,
    no kernel), and `nnergy account` has no GPU event to give the GPU's energy to: seen on an
    H100 with torch 2.11 (data/measured/h100/README.md)."""
    if torch.cuda.is_available():
        try:
            return torch.autograd.profiler.profile(use_device="cuda")  # torch >= 2.1
        except TypeError:
            return torch.autograd.profiler.profile(use_cuda=True)  # older torch
    return torch.autograd.profiler.profile()


def _is_kineto(profiler) -> bool:
    """True when the profiler recorded through Kineto (newer torch, or a Kineto build)."""
    return bool(torch.autograd.kineto_available()) and bool(getattr(profiler, "use_kineto", True))


def _marker_ts_us(trace_path: pathlib.Path) -> Optional[float]:
    """ts (µs, the trace's own time base) of the time-base marker, or None."""
    with open(trace_path) as f:
        data = json.load(f)
    events = data["traceEvents"] if isinstance(data, dict) else data
    for e in events:
        if e.get("name") == MARKER_NAME and e.get("ph") == "X":
            return float(e["ts"])
    return None


class Session:
    """A recording: module hooks, the profiler and `nnergy monitor` started together.

    Use through `session(...)`. `steps` counts `step()` calls (optional bookkeeping written to
    session.json)."""

    def __init__(self, model, out, power_sources=None, nnergy_bin=None, power_devices=None,
                 interval_ms=None, power_recorder=None):
        self.model = model
        self.out = pathlib.Path(out)
        self.power_sources = list(power_sources or [])
        self.nnergy_bin = nnergy_bin
        self.power_devices = dict(power_devices or {})
        self.interval_ms = interval_ms
        self.power_recorder = power_recorder
        self.steps = 0
        self._monitor = None
        self._profiler = None
        self._handles = []
        self._marker_epoch_ns = None

    def step(self):
        """Marks the end of a training step (counted in session.json)."""
        self.steps += 1

    def _start_monitor(self):
        if self.power_recorder is not None:
            # In process (nnergy.session: the nnergy package's power meter writes power.csv).
            self.power_recorder.start(self.out / "power.csv", self.power_sources,
                                      self.interval_ms)
        else:
            self._start_monitor_process()
        time.sleep(0.05)  # a few samples before the program starts

    def _start_monitor_process(self):
        binary = find_nnergy(self.nnergy_bin)
        command = [binary, "monitor", "-o", str(self.out / "power.csv")]
        for source in self.power_sources:
            command += ["--source", source]
        if self.interval_ms is not None:
            command += ["--interval-ms", str(self.interval_ms)]
        # The monitored command announces that it runs (so sampling has begun) by creating the
        # ready file, then waits until the stop file exists: creating it ends the recording
        # (the monitored command does not get our stdin, and SIGTERM ends the monitor without its
        # trace).
        self._stop_file = self.out / ".nnergy_stop"
        ready_file = self.out / ".nnergy_ready"
        for f in (self._stop_file, ready_file):
            if f.exists():
                f.unlink()
        command += ["--", "/bin/sh", "-c",
                    'touch "$1"; while [ ! -e "$0" ]; do sleep 0.02; done',
                    str(self._stop_file), str(ready_file)]
        self._monitor = subprocess.Popen(command, stdin=subprocess.DEVNULL,
                                         stdout=subprocess.DEVNULL,
                                         stderr=open(self.out / "monitor.log", "w"))
        deadline = time.monotonic() + 60
        while not ready_file.exists():
            if self._monitor.poll() is not None:
                raise RuntimeError(f"nnergy monitor exited with {self._monitor.returncode}; see "
                                   f"{self.out / 'monitor.log'}")
            if time.monotonic() > deadline:
                self._monitor.kill()
                raise RuntimeError("nnergy monitor did not start its command within 60 s")
            time.sleep(0.01)
        ready_file.unlink()

    def _stop_monitor(self):
        time.sleep(0.1)  # a last sample after the program's end
        if self.power_recorder is not None:
            for message in self.power_recorder.stop():
                warnings.warn(f"nnergy: {message}", stacklevel=3)
        elif self._monitor is not None:
            self._stop_monitor_process()

    def _stop_monitor_process(self):
        self._stop_file.touch()
        try:
            self._monitor.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self._monitor.kill()
            self._monitor.wait()
        if self._stop_file.exists():
            self._stop_file.unlink()
        if self._monitor.returncode != 0:
            raise RuntimeError(f"nnergy monitor exited with {self._monitor.returncode}; see "
                               f"{self.out / 'monitor.log'}")
        self._forward_monitor_warnings()

    def _forward_monitor_warnings(self):
        """Passes on the warnings of nnergy monitor (e.g. a power trace without any power
        source), which would otherwise stay in monitor.log until `nnergy account` finds out."""
        try:
            lines = (self.out / "monitor.log").read_text().splitlines()
        except OSError:
            return
        for line in lines:
            if line.startswith(" warning: "):
                warnings.warn(f"nnergy monitor: {line[len(' warning: '):]}", stacklevel=5)

    def __enter__(self):
        self.out.mkdir(parents=True, exist_ok=True)
        self._start_monitor()
        self._handles = _module_hooks(self.model)
        self._profiler = _new_profiler()
        self._profiler.__enter__()
        # The time-base marker: its ts in the trace and the UNIX time taken right before it give
        # the offset between the trace's clock and the power trace's epoch_s.
        self._marker_epoch_ns = time.time_ns()
        with torch.autograd.profiler.record_function(MARKER_NAME):
            pass
        self._marker_epoch_after_ns = time.time_ns()
        return self

    def __exit__(self, exc_type, exc, tb):
        try:
            self._profiler.__exit__(exc_type, exc, tb)
        finally:
            for h in self._handles:
                h.remove()
            self._handles = []
            self._stop_monitor()
        if exc_type is not None:
            return False
        trace_path = self.out / "trace.json"
        trace_format = _export_trace(self._profiler, trace_path)
        marker_ts_us = _marker_ts_us(trace_path)
        # The marker's range starts between the two time.time_ns() calls; the midpoint bounds
        # the error by half their distance (reported as trace_epoch_offset_uncertainty_s).
        marker_epoch_s = 0.5 * (self._marker_epoch_ns + self._marker_epoch_after_ns) * 1e-9
        half_width_s = 0.5 * (self._marker_epoch_after_ns - self._marker_epoch_ns) * 1e-9
        session_json = {
            "format_version": SESSION_FORMAT_VERSION,
            "trace_file": "trace.json",
            "trace_format": trace_format,
            "power_file": "power.csv",
            "power_sources": self.power_sources or ["detected"],
            "power_devices": self.power_devices,
            "trace_epoch_offset_s": (marker_epoch_s - marker_ts_us * 1e-6
                                     if marker_ts_us is not None else None),
            "trace_epoch_offset_uncertainty_s": half_width_s,
            "torch_version": torch.__version__,
            "steps": self.steps,
            "model": type(self.model).__name__,
        }
        with open(self.out / "session.json", "w") as f:
            json.dump(session_json, f, indent=2)
        return False


def session(model, out, power_sources: Optional[Sequence[str]] = None,
            nnergy_bin: Optional[str] = None, power_devices: Optional[dict] = None,
            interval_ms: Optional[float] = None, power_recorder=None) -> Session:
    """A context manager recording `model`'s run into directory `out` for `nnergy account`.

    power_sources: `nnergy monitor --source` values (e.g. ["synthetic:constant=100"]); None lets
    nnergy monitor detect NVML/RAPL. power_devices: {source id: "cpu" | "gpu:N"} for sources
    whose device nnergy cannot tell (synthetic, replay); a "synthetic:" source defaults to "cpu"
    (this is recorded in session.json). nnergy_bin: path of the nnergy executable (else
    $NNERGY_BIN, else PATH). power_recorder: records power.csv in this process instead of
    `nnergy monitor` (an object with start(path, sources, interval_ms) and stop() -> warnings;
    nnergy.session passes the nnergy package's power meter)."""
    devices = dict(power_devices or {})
    for source in power_sources or []:
        if source.startswith("synthetic:"):
            spec = source[len("synthetic:"):]
            name = next((item[5:] for item in spec.split(",") if item.startswith("name=")), "")
            devices.setdefault("synthetic:" + name if name else "synthetic", "cpu")
    return Session(model, out, power_sources, nnergy_bin, devices, interval_ms, power_recorder)
