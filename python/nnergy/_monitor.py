"""nnergy.Monitor and @nnergy.measure: measurement windows over the power sources, in process.

The sampler and the window statistics are the library's (api::PowerMeter: measure::Sampler and
measure::Meter, as `nnergy monitor` uses them); this module only names the windows and wraps
their results."""

import functools
import json
import threading

from nnergy import _core
from nnergy._records import dataframe


class Measurement:
    """A closed window: name, begin_s and end_s (the monitor's steady clock, s), time_s, and per
    power source (by id): energy_j (from the energy counter when the source has one, else mean
    power × time), energy_sigma_j, power_w (mean), peak_power_w. `sources` has every statistic
    per source (samples, clocks, throttling, how the energy was obtained); `table` is it as a
    DataFrame. A source with no samples in the window has None figures."""

    def __init__(self, window):
        self._window = window

    name = property(lambda self: self._window["name"])
    begin_s = property(lambda self: self._window["begin_s"])
    end_s = property(lambda self: self._window["end_s"])
    time_s = property(lambda self: self._window["time_s"])

    @property
    def sources(self):
        return [dict(s) for s in self._window["sources"]]

    @property
    def table(self):
        return dataframe(self._window["sources"])

    def _by_source(self, key):
        return {s["id"]: s[key] for s in self._window["sources"]}

    energy_j = property(lambda self: self._by_source("energy_j"))
    energy_sigma_j = property(lambda self: self._by_source("energy_sigma_j"))
    power_w = property(lambda self: self._by_source("power_mean_w"))
    peak_power_w = property(lambda self: self._by_source("power_peak_w"))

    def to_dict(self):
        return json.loads(json.dumps(self._window))

    def to_json(self, indent=None):
        return json.dumps(self._window, indent=indent)

    def __repr__(self):
        def fmt(values, unit):
            return "{" + ", ".join(f"{k}: {'-' if v is None else f'{v:.4g} {unit}'}"
                                   for k, v in values.items()) + "}"
        return (f"Measurement({self.name!r}, time {self.time_s:.4g} s, energy "
                f"{fmt(self.energy_j, 'J')}, power {fmt(self.power_w, 'W')})")


class Window:
    """An open window of a Monitor; `result` is its Measurement once ended. As a context manager
    (`with mon.window("epoch") as w:`) it ends when the block does."""

    def __init__(self, monitor, handle, name):
        self.monitor = monitor
        self.handle = handle
        self.name = name
        self.result = None

    def end(self, iterations=None):
        """Ends the window now; returns (and keeps in .result) its Measurement."""
        self.result = self.monitor.end_window(self, iterations=iterations)
        return self.result

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        self.end()
        return False

    def __repr__(self):
        return f"Window({self.name!r}, {'ended' if self.result else 'open'})"


class Monitor:
    """Measures time and energy of parts of this program, as `nnergy monitor` does for a command.

    sources      power sources: "nvml", "nvml:INDEX", "rapl", "rapl:ZONE", "synthetic:SPEC"
                 (e.g. "synthetic:constant=250"), "replay:PATH"; a str or a list. Default: the
                 NVIDIA GPUs (NVML) and CPU packages (RAPL) found here (see .unavailable)
    interval_ms  sampling period, ms (1 to 60000)
    sigma_filter, exclude_off_clock, exclude_throttled: which samples the power statistics use

    Sampling runs on background threads from construction until close() (or the end of a `with`
    block). Windows: `with Monitor() as mon:` measures the block (mon.result); inside or outside,
    mon.begin_window(name) / mon.end_window(window_or_name) or `with mon.window(name):`. Windows
    may nest and overlap, and any thread may open and close them. Raises nnergy.InvalidInput for
    a malformed source or interval and nnergy.DeviceError for a named source absent here."""

    def __init__(self, sources=None, interval_ms=20.0, sigma_filter=3.0, exclude_off_clock=False,
                 exclude_throttled=False):
        if isinstance(sources, str):
            sources = [sources]
        self._meter = _core.PowerMeter(list(sources or []), float(interval_ms))
        self._options = dict(sigma_filter=float(sigma_filter),
                             exclude_off_clock=bool(exclude_off_clock),
                             exclude_throttled=bool(exclude_throttled))
        self._outer = None
        self.result = None

    @property
    def source_ids(self):
        return self._meter.source_ids()

    @property
    def unavailable(self):
        """{kind: reason} of the detected kinds absent here (empty when sources were named)."""
        return dict(self._meter.unavailable())

    @property
    def warnings(self):
        return list(self._meter.warnings())

    @property
    def interval_ms(self):
        return self._meter.interval_ms

    def sampler_cpu_time_s(self):
        """CPU time the sampler threads have used so far, s."""
        return self._meter.sampler_cpu_time_s()

    def begin_window(self, name="window"):
        """Opens a window now; returns it (end it with end_window or window.end())."""
        name = str(name)
        return Window(self, self._meter.begin(name), name)

    def end_window(self, window, iterations=None):
        """Ends `window` (a Window, or the name of the latest open window of that name) now and
        returns its Measurement; iterations: run in the window, for per-iteration figures."""
        if isinstance(window, Window):
            if window.monitor is not self:
                raise _core.InvalidInput(
                    f"window: expected a window of this Monitor, found {window.name!r} of "
                    "another one; end it with the Monitor that began it")
            result = self._meter.end(window.handle, iterations=iterations, **self._options)
            window.result = Measurement(json.loads(result))
            return window.result
        if isinstance(window, str):
            return Measurement(json.loads(
                self._meter.end_named(window, iterations=iterations, **self._options)))
        raise _core.InvalidInput(
            "window: expected a Window (from begin_window) or a window's name, found "
            f"{type(window).__name__}")

    def window(self, name="window"):
        """A window as a context manager: `with mon.window("step") as w: ...`; then w.result."""
        return self.begin_window(name)

    def close(self):
        """Takes a last sample and stops sampling; open windows can still be ended."""
        self._meter.stop()

    def __enter__(self):
        self._outer = self.begin_window("monitor")
        return self

    def __exit__(self, exc_type, exc, tb):
        self.result = self.end_window(self._outer)
        self.close()
        return False

    def __repr__(self):
        return f"Monitor(sources={self.source_ids}, interval_ms={self.interval_ms:g})"


def measure(function=None, *, sources=None, interval_ms=20.0, monitor=None, name=None,
            on_measurement=None):
    """Decorator: measures every call of the function in a Monitor window.

        @nnergy.measure
        def train_one_epoch(): ...

        @nnergy.measure(sources="synthetic:constant=250", on_measurement=print)
        def step(): ...

    Each call's Measurement is kept in `function.last_measurement` and passed to
    `on_measurement` when given. `monitor`: a Monitor to open the windows on (else one is started
    and closed around every call, with `sources` and `interval_ms`); `name`: the windows' name
    (default the function's qualified name). Exceptions of the function pass through after its
    window is ended."""

    def decorate(f):
        window_name = name or f.__qualname__
        lock = threading.Lock()

        @functools.wraps(f)
        def wrapper(*args, **kwargs):
            mon = monitor if monitor is not None else Monitor(sources, interval_ms)
            window = mon.begin_window(window_name)
            try:
                return f(*args, **kwargs)
            finally:
                result = mon.end_window(window)
                if monitor is None:
                    mon.close()
                with lock:
                    wrapper.last_measurement = result
                if on_measurement is not None:
                    on_measurement(result)

        wrapper.last_measurement = None
        return wrapper

    return decorate(function) if function is not None else decorate
