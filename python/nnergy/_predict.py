"""nnergy.predict: per-layer and whole-network time, power and energy of a model on a GPU."""

import inspect
import json
import os
import sys

from nnergy import _core
from nnergy._records import Record, dataframe


class Totals(Record):
    """Totals per iteration: time_s, energy_j, power_w (average), edp_j_s, energy_per_sample_j,
    their 1σ uncertainties time_std_s, energy_std_j, edp_std_j_s (0: the model gives none),
    mac_count, flop_count, byte_count (a lower bound), parameter_count, kernel_count, gpu_time_s,
    host_launch_s and memory_peak_bytes (None when not estimated)."""


class ClockSweep:
    """Predictions over the device's core clocks: `points` (DataFrame: clock_mhz, time_s, power_w,
    energy_j, edp_j_s and their 1σ), the energy- and EDP-optimal clocks, and how sure each
    optimum is (`energy_optimum`, `edp_optimum`: runner-up, margin in σ, clocks whose 1σ
    intervals overlap)."""

    def __init__(self, sweep):
        self._sweep = sweep

    @property
    def points(self):
        return dataframe(self._sweep["points"])

    @property
    def energy_optimal_clock_mhz(self):
        return self._sweep["energy_optimal_clock_mhz"]

    @property
    def edp_optimal_clock_mhz(self):
        return self._sweep["edp_optimal_clock_mhz"]

    def _point_at(self, clock_mhz):
        return next(p for p in self._sweep["points"] if p["clock_mhz"] == clock_mhz)

    @property
    def energy_optimal(self):
        """The sweep's point (dict) with the least energy."""
        return dict(self._point_at(self.energy_optimal_clock_mhz))

    @property
    def edp_optimal(self):
        """The sweep's point (dict) with the least energy-delay product."""
        return dict(self._point_at(self.edp_optimal_clock_mhz))

    @property
    def energy_optimum(self):
        return dict(self._sweep["energy_optimum"])

    @property
    def edp_optimum(self):
        return dict(self._sweep["edp_optimum"])

    def to_dict(self):
        return json.loads(json.dumps(self._sweep))

    def to_json(self, indent=None):
        return json.dumps(self._sweep, indent=indent)

    def __repr__(self):
        return (f"ClockSweep({len(self._sweep['points'])} clocks, energy-optimal "
                f"{self.energy_optimal_clock_mhz:g} MHz, EDP-optimal "
                f"{self.edp_optimal_clock_mhz:g} MHz)")


class Prediction:
    """What nnergy.predict returns: the report of `nnergy predict` as Python objects.

    totals      Totals (time_s, energy_j, power_w with time_std_s, energy_std_j, ...)
    layers      DataFrame, one row per layer (network order): name, module_path, op_type,
                output_shape, mac_count, flop_count, byte_count, parameter_count, time_s,
                power_w, energy_j, energy_share, their 1σ, flags
    memory      dict of the estimated device memory (bytes), or None
    notes       list of str: how every figure was obtained
    clock_sweep()  ClockSweep over the device's clocks
    text(), to_csv(), to_dict(), to_json()
    """

    def __init__(self, report, request):
        self._report = report
        self._request = request
        self._dict = json.loads(report.to_json())

    @property
    def totals(self):
        return Totals(self._dict["totals"])

    @property
    def layers(self):
        frame = dataframe(self._dict["layers"])
        # The node index is absent for rows that are no ONNX node (the host's launch wait, the
        # optimizer step): a nullable integer column, not floats.
        if "index" in frame:
            frame["index"] = frame["index"].astype("Int64")
        return frame

    @property
    def memory(self):
        return self._dict["memory"]

    @property
    def notes(self):
        return list(self._dict["notes"])

    @property
    def models(self):
        return dict(self._dict["models"])

    @property
    def context(self):
        return dict(self._dict["context"])

    def clock_sweep(self, step_mhz=None):
        """The prediction over the device's core clocks (predicted again with
        sweep_clocks=True; step_mhz: default the device's step, at most ~100 points)."""
        if "clock_sweep" in self._dict and step_mhz is None:
            return ClockSweep(self._dict["clock_sweep"])
        request = dict(self._request, sweep_clocks=True, sweep_step_mhz=step_mhz)
        report = _core.predict(**request)
        return ClockSweep(json.loads(report.to_json())["clock_sweep"])

    def text(self, top=25, order="energy"):
        """The text report of `nnergy predict` (top: layers listed, 0 for all; order: "energy"
        or "network")."""
        if order not in ("energy", "network"):
            raise _core.InvalidInput(f"order={order!r}: expected 'energy' or 'network'")
        return self._report.render_text(top, order == "energy")

    def to_csv(self):
        """The CSV of `nnergy predict --csv`: one row per layer (per clock with a sweep)."""
        return self._report.render_csv()

    def to_dict(self):
        """The JSON document of `nnergy predict --json`, with counts named *_count."""
        return json.loads(json.dumps(self._dict))

    def to_json(self, indent=None):
        return json.dumps(self._dict, indent=indent)

    def __str__(self):
        return self.text()

    def __repr__(self):
        t = self._dict["totals"]
        context = self._dict["context"]

        def pm(value, std, scale, unit):
            return f"{value * scale:.4g}{' ± %.3g' % (std * scale) if std else ''} {unit}"
        return (f"<nnergy.Prediction {context['network']['name']} on {context['device']['id']}, "
                f"{context['mode']}, batch {context['batch']}, {context['precision']}:"
                f" {pm(t['time_s'], t['time_std_s'], 1e3, 'ms')},"
                f" {pm(t['energy_j'], t['energy_std_j'], 1, 'J')}, {t['power_w']:.4g} W>")


def _is_torch_module(model):
    torch = sys.modules.get("torch")  # a module object means torch was imported by the caller
    return torch is not None and isinstance(model, torch.nn.Module)


def _command_line(model_text, given):
    shown = [model_text] + [f"{k}={v!r}" for k, v in given.items() if v is not None]
    return "nnergy.predict(" + ", ".join(shown) + ")"


# The settings of predict as the library declares them (api/predict_settings.h): the keyword
# arguments below, their defaults and their help come from there, as `nnergy predict`'s options
# do.
_SETTINGS = _core.predict_settings()


def _default(setting):
    return False if setting["switch"] else (setting["default"] or None)


def predict(model, example_input=None, *, opset_version=None, onnx_path=None, **settings):
    arguments = {s["keyword"]: _default(s) for s in _SETTINGS}
    given = {k: os.fspath(v) if isinstance(v, os.PathLike) else v for k, v in settings.items()}
    arguments.update(given)
    source = model_source(model, example_input, mode=arguments.get("mode") or "inference",
                          opset_version=opset_version, onnx_path=onnx_path)
    if source.example_batch is not None and arguments.get("batch") is None:
        arguments["batch"] = given["batch"] = source.example_batch
    request = dict(arguments, model=source.path,
                   command_line=_command_line(source.shown, given))
    prediction = Prediction(_core.predict(**request), request)
    # The export lives as long as the Prediction, so that clock_sweep() can predict on it again.
    prediction._export_directory = source.directory
    return prediction


def _settings_help():
    lines = []
    for s in _SETTINGS:
        words = s["help"].split()
        line = f"    {s['keyword']:<15}"
        for word in words:
            if len(line) + len(word) + 1 > 99:
                lines.append(line.rstrip())
                line = " " * 19
            line += word + " "
        lines.append(line.rstrip())
    return "\n".join(lines)


predict.__doc__ = """Predicts per-layer and network time, power and energy of one iteration (api::predict).

    model          a zoo name (nnergy.zoo()), the path of an .onnx file, or a torch.nn.Module,
                   which is exported in-process with torch.onnx.export (a dynamic batch axis on
                   every input; training mode exports with TrainingMode.TRAINING and no constant
                   folding, so that BatchNorm is kept) — example_input is then required: a tensor
                   or a tuple of tensors, one batch of the model's inputs; batch then defaults to
                   its leading dimension
    opset_version  ONNX opset of the export of a module; default: the highest both the installed
                   torch and nnergy's ONNX library support; onnx_path: keep that export here

    The settings (keyword arguments; `nnergy predict` has an option for each, --batch for
    batch; None leaves one at its default; paths may be os.PathLike; dims is a dict):
""" + _settings_help() + """

    Returns a Prediction. Raises nnergy.InvalidInput for bad arguments (naming them as keywords,
    e.g. batch=0, or an unknown keyword with the accepted ones), a model that is neither a name,
    a path nor a module, and a module that torch.onnx.export cannot export.
    """

predict.__signature__ = inspect.Signature(
    [inspect.Parameter("model", inspect.Parameter.POSITIONAL_OR_KEYWORD),
     inspect.Parameter("example_input", inspect.Parameter.POSITIONAL_OR_KEYWORD, default=None)]
    + [inspect.Parameter(s["keyword"], inspect.Parameter.KEYWORD_ONLY, default=_default(s))
       for s in _SETTINGS]
    + [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=None)
       for name in ("opset_version", "onnx_path")])


class ModelSource:
    """What nnergy's library reads for a `model` argument: `path` (a zoo name or an .onnx file),
    `shown` (how the command line names it), `directory` (the temporary directory holding the
    export of a module, or None) and `example_batch` (a module's example batch, or None)."""

    def __init__(self, path, shown, directory=None, example_batch=None):
        self.path, self.shown = path, shown
        self.directory, self.example_batch = directory, example_batch


def model_source(model, example_input, *, mode, opset_version, onnx_path=None):
    """A zoo name or .onnx path as it is; a torch.nn.Module exported with torch.onnx.export
    (training mode keeps BatchNorm) to `onnx_path` or a temporary directory. Raises
    nnergy.InvalidInput for an example_input without a module, or a model of another kind."""
    if isinstance(model, (str, os.PathLike)):
        if example_input is not None:
            raise _core.InvalidInput(
                "example_input: only for a torch.nn.Module, found one with model="
                f"{os.fspath(model)!r}; leave it out for a zoo name or an .onnx path")
        return ModelSource(os.fspath(model), repr(os.fspath(model)))
    if not _is_torch_module(model):
        raise _core.InvalidInput(
            "model: expected a zoo name (see nnergy.zoo()), the path of an .onnx file or a "
            f"torch.nn.Module, found {type(model).__module__}.{type(model).__qualname__}")
    from nnergy._torch_export import export_module, leading_dimension
    name = type(model).__name__
    directory = None
    if onnx_path:
        path = os.fspath(onnx_path)
    else:
        import tempfile
        directory = tempfile.TemporaryDirectory(prefix="nnergy-export-")
        path = os.path.join(directory.name, name + ".onnx")
    export_module(model, example_input, path, training=_core.mode_name(mode) == "training",
                  opset_version=opset_version)
    return ModelSource(path, f"<{name} module>", directory, leading_dimension(example_input))
