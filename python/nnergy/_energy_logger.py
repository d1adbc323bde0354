"""nnergy.EnergyLogger: energy, kWh and CO2e per training step and epoch of a plain PyTorch loop,
written as the run goes (on Monitor windows)."""

import base64
import csv
import json
import os
import re
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
import warnings

from nnergy import _core
from nnergy._monitor import Monitor

JOULES_PER_KWH = 3.6e6

# The carbon intensity used when none is given, g CO2e per kWh: the library's (core/carbon.h: the
# world's average in 2023, Ember), as `nnergy monitor` uses it; set your grid's (from your
# utility, Ember or Electricity Maps) with grid_gco2e_per_kwh (`nnergy monitor
# --grid-gco2e-per-kwh`).
DEFAULT_GRID_G_PER_KWH = _core.default_grid_gco2e_per_kwh


class EnergyLogger:
    """Logs every training step and epoch: time, energy (J and kWh), CO2e (g) and average power.

        logger = nnergy.EnergyLogger("energy.csv", grid_gco2e_per_kwh=350)
        for epoch in range(epochs):
            with logger.epoch():
                for x, y in loader:
                    with logger.step(samples=len(x)):
                        train_step(x, y)
        logger.close()

    path            where the rows go: ".csv" for CSV, ".json"/".jsonl" for one JSON object per
                    line; each row is flushed when written
    grid_gco2e_per_kwh  carbon intensity of the electricity, g CO2e per kWh, as `nnergy monitor
                    --grid-gco2e-per-kwh` (default 481, the world average of 2023 per Ember: set
                    your grid's); grid_g_per_kwh is its older name, still accepted
    sources, interval_ms  the power sources and sampling period of the Monitor it starts (as for
                    Monitor); or monitor: an existing Monitor to use
    log_steps       also write a row per step (else per epoch only)
    pushgateway     "HOST:PORT" (or "http://HOST:PORT") of a Prometheus Pushgateway: after every
                    epoch and at close(), the run's totals are pushed (PUT, replacing the group)
                    as job `push_job` with the grouping labels `push_labels` (a dict, e.g.
                    {"instance": "node17", "run": "resnet50-bs64"}):
                      nnergy_training_energy_joules_total{source}  counter, J, per power source
                      nnergy_training_co2e_grams_total             counter, g CO2e
                      nnergy_training_epochs_total                 counter
                      nnergy_training_last_epoch_energy_joules     gauge, J
                      nnergy_training_last_epoch_seconds           gauge, s
                    A failed push warns (once per kind of failure) and training goes on.

    A row: kind ("step" or "epoch"), epoch, step (within the epoch; the epoch's step count for an
    epoch row), unix_time_s (its start), time_s, energy_j (summed over the sources: name
    non-overlapping ones, e.g. "nvml" and "rapl:package-0"), energy_kwh, co2e_g, power_w,
    samples, and energy_j:<source> per source. energy is empty when no source measured it.
    begin_step()/end_step() and begin_epoch()/end_epoch() are the same without `with`; end_*
    return the row (a dict). Not for concurrent steps from several threads."""

    @property
    def grid_g_per_kwh(self):
        """The older name of grid_gco2e_per_kwh."""
        return self.grid_gco2e_per_kwh

    def __init__(self, path, grid_gco2e_per_kwh=None, sources=None, interval_ms=20.0,
                 monitor=None, log_steps=True, pushgateway=None, push_job="nnergy_energy_logger",
                 push_labels=None, grid_g_per_kwh=None):
        path = os.fspath(path)
        extension = os.path.splitext(path)[1].lower()
        if extension not in (".csv", ".json", ".jsonl"):
            raise _core.InvalidInput(
                f"path={path!r}: expected a file ending in .csv, .json or .jsonl (the format of "
                "the rows)")
        if grid_gco2e_per_kwh is not None and grid_g_per_kwh is not None:
            raise _core.InvalidInput(
                "grid_gco2e_per_kwh and grid_g_per_kwh: one setting under two names "
                "(grid_g_per_kwh is the older); give one")
        keyword, grid = ("grid_g_per_kwh", grid_g_per_kwh) if grid_g_per_kwh is not None else (
            "grid_gco2e_per_kwh", grid_gco2e_per_kwh)
        if grid is None:
            grid = DEFAULT_GRID_G_PER_KWH
        if not (isinstance(grid, (int, float)) and grid >= 0):
            raise _core.InvalidInput(
                f"{keyword}={grid!r}: expected a carbon intensity >= 0 in g CO2e per kWh (e.g. "
                "481, the world average of 2023 per Ember)")
        self._push_url = _pushgateway_url(pushgateway, push_job, push_labels or {})
        self._push_failures = set()
        self._energy_by_source = {}
        self._last_epoch = None
        self.path = path
        self.grid_gco2e_per_kwh = float(grid)
        self.log_steps = log_steps
        self._own_monitor = monitor is None
        self.monitor = monitor if monitor is not None else Monitor(sources, interval_ms)
        self._source_ids = self.monitor.source_ids
        if not self._source_ids:
            reasons = "; ".join(f"{k}: {v}" for k, v in self.monitor.unavailable.items())
            warnings.warn(f"nnergy.EnergyLogger: no power source available here ({reasons}); "
                          "only time is logged; pass sources=[...]", stacklevel=2)
        self._csv = extension == ".csv"
        self._file = open(path, "w", newline="" if self._csv else None, encoding="utf-8")
        self._columns = (["kind", "epoch", "step", "unix_time_s", "time_s", "energy_j",
                          "energy_kwh", "co2e_g", "power_w", "samples"] +
                         [f"energy_j:{s}" for s in self._source_ids])
        if self._csv:
            self._writer = csv.DictWriter(self._file, fieldnames=self._columns)
            self._writer.writeheader()
            self._file.flush()
        self._lock = threading.Lock()
        self.epoch_index = 0
        self.step_index = 0
        self.total_energy_j = 0.0
        self._epoch_window = None
        self._epoch_start = None
        self._epoch_samples = 0
        self._step_window = None
        self._step_start = None
        self._step_samples = None
        self.rows = 0

    def _row(self, kind, measurement, start, samples):
        energies = measurement.energy_j
        known = [e for e in energies.values() if e is not None]
        energy = sum(known) if known else None
        row = {"kind": kind, "epoch": self.epoch_index, "step": self.step_index,
               "unix_time_s": start, "time_s": measurement.time_s, "energy_j": energy,
               "energy_kwh": None if energy is None else energy / JOULES_PER_KWH,
               "co2e_g": None if energy is None else energy / JOULES_PER_KWH * self.grid_gco2e_per_kwh,
               "power_w": None if energy is None or measurement.time_s <= 0
               else energy / measurement.time_s,
               "samples": samples}
        for source in self._source_ids:
            row[f"energy_j:{source}"] = energies.get(source)
        return row

    def _write(self, row):
        with self._lock:
            if self._csv:
                self._writer.writerow({k: ("" if v is None else v) for k, v in row.items()})
            else:
                self._file.write(json.dumps(row) + "\n")
            self._file.flush()
            self.rows += 1

    def begin_epoch(self):
        if self._epoch_window is not None:
            raise _core.InvalidInput("begin_epoch(): epoch %d is still open; end_epoch() first"
                                     % self.epoch_index)
        self.step_index = 0
        self._epoch_samples = 0
        self._epoch_start = time.time()
        self._epoch_window = self.monitor.begin_window(f"epoch {self.epoch_index}")

    def end_epoch(self):
        if self._epoch_window is None:
            raise _core.InvalidInput("end_epoch(): no epoch is open; begin_epoch() first")
        measurement = self._epoch_window.end()
        self._epoch_window = None
        row = self._row("epoch", measurement, self._epoch_start, self._epoch_samples or None)
        if row["energy_j"] is not None:
            self.total_energy_j += row["energy_j"]
        for source in self._source_ids:
            energy = row[f"energy_j:{source}"]
            if energy is not None:
                self._energy_by_source[source] = self._energy_by_source.get(source, 0.0) + energy
        self._write(row)
        self.epoch_index += 1
        self._last_epoch = row
        self.push()
        return row

    def push(self):
        """Pushes the totals to the Pushgateway now (a no-op without one); True when it took
        them. Called after every epoch and by close()."""
        if self._push_url is None:
            return False
        lines = ["# TYPE nnergy_training_energy_joules_total counter"]
        lines += [f'nnergy_training_energy_joules_total{{source="{_label_value(s)}"}} {e!r}'
                  for s, e in sorted(self._energy_by_source.items())]
        lines += ["# TYPE nnergy_training_co2e_grams_total counter",
                  f"nnergy_training_co2e_grams_total {self.total_co2e_g!r}",
                  "# TYPE nnergy_training_epochs_total counter",
                  f"nnergy_training_epochs_total {self.epoch_index}"]
        if self._last_epoch is not None and self._last_epoch["energy_j"] is not None:
            lines += ["# TYPE nnergy_training_last_epoch_energy_joules gauge",
                      f"nnergy_training_last_epoch_energy_joules {self._last_epoch['energy_j']!r}"]
        if self._last_epoch is not None:
            lines += ["# TYPE nnergy_training_last_epoch_seconds gauge",
                      f"nnergy_training_last_epoch_seconds {self._last_epoch['time_s']!r}"]
        request = urllib.request.Request(self._push_url, data=("\n".join(lines) + "\n").encode(),
                                         method="PUT",
                                         headers={"Content-Type": "text/plain; version=0.0.4"})
        try:
            with urllib.request.urlopen(request, timeout=5) as response:
                return 200 <= response.status < 300
        except (urllib.error.URLError, OSError) as e:
            kind = type(e).__name__ + str(getattr(e, "code", ""))
            if kind not in self._push_failures:
                self._push_failures.add(kind)
                warnings.warn(f"nnergy.EnergyLogger: push to {self._push_url} failed ({e}); "
                              "training goes on, the next epoch pushes again", stacklevel=2)
            return False

    def begin_step(self, samples=None):
        if self._step_window is not None:
            raise _core.InvalidInput("begin_step(): step %d is still open; end_step() first"
                                     % self.step_index)
        self._step_samples = samples
        self._step_start = time.time()
        self._step_window = self.monitor.begin_window(f"step {self.step_index}")

    def end_step(self):
        if self._step_window is None:
            raise _core.InvalidInput("end_step(): no step is open; begin_step() first")
        measurement = self._step_window.end()
        self._step_window = None
        row = self._row("step", measurement, self._step_start, self._step_samples)
        if self._step_samples:
            self._epoch_samples += self._step_samples
        if self.log_steps:
            self._write(row)
        self.step_index += 1
        return row

    def epoch(self):
        """`with logger.epoch():` — begin_epoch() and end_epoch() around the block."""
        return _Scope(self.begin_epoch, self.end_epoch)

    def step(self, samples=None):
        """`with logger.step(samples=n):` — begin_step() and end_step() around the block."""
        return _Scope(lambda: self.begin_step(samples), self.end_step)

    @property
    def total_kwh(self):
        return self.total_energy_j / JOULES_PER_KWH

    @property
    def total_co2e_g(self):
        return self.total_kwh * self.grid_gco2e_per_kwh

    def close(self):
        """Pushes the totals a last time (with a Pushgateway), closes the file and stops the
        Monitor it started."""
        if not self._file.closed:
            self.push()
        if self._own_monitor:
            self.monitor.close()
        if not self._file.closed:
            self._file.close()

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        self.close()
        return False


_LABEL_NAME = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_]*$")


def _label_value(text):
    return str(text).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _pushgateway_url(address, job, labels):
    """The Pushgateway URL of the group, or None without an address; InvalidInput for a
    malformed address, job or label."""
    if address is None:
        return None
    text = str(address)
    if "://" not in text:
        text = "http://" + text
    parsed = urllib.parse.urlsplit(text)
    try:
        port = parsed.port
    except ValueError:
        port = None
    if parsed.scheme not in ("http", "https") or not parsed.hostname or port is None:
        raise _core.InvalidInput(
            f"pushgateway={address!r}: expected HOST:PORT or http://HOST:PORT of a Prometheus "
            "Pushgateway (e.g. 127.0.0.1:9091)")
    if not job or "/" in str(job):
        raise _core.InvalidInput(f"push_job={job!r}: expected a non-empty job name without '/'")
    path = f"/metrics/job/{urllib.parse.quote(str(job), safe='')}"
    for name, value in labels.items():
        if not _LABEL_NAME.match(str(name)) or name == "job" or not str(value):
            raise _core.InvalidInput(
                f"push_labels: {name!r}={value!r}: expected label names like 'instance' (not "
                "'job') with non-empty values")
        # The Pushgateway splits the path at "/" even when percent-encoded: a value holding one
        # is sent base64url-encoded with the label name suffixed "@base64", as its API requires.
        text = str(value)
        if "/" in text:
            encoded = base64.urlsafe_b64encode(text.encode()).decode()
            path += f"/{name}@base64/{encoded}"
        else:
            path += f"/{name}/{urllib.parse.quote(text, safe='')}"
    return f"{parsed.scheme}://{parsed.netloc}{path}"


class _Scope:
    def __init__(self, begin, end):
        self._begin = begin
        self._end = end
        self.row = None

    def __enter__(self):
        self._begin()
        return self

    def __exit__(self, exc_type, exc, tb):
        self.row = self._end()
        return False
