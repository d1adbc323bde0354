"""nnergy.serve: time, power and energy per token of serving a language model on GPUs."""

import json
import os
import tempfile

from nnergy import _core
from nnergy._records import Record, dataframe


class ServeTotals(Record):
    """The deployment's figures (all GPUs): energy_per_output_token_j, output_tokens_per_s,
    output_tokens_per_s_per_gpu, time_per_output_token_s (ITL), ttft_s, request_latency_s,
    energy_per_request_j, avg_power_w, avg_power_per_gpu_w, and the batch that ran."""


class Serving:
    """What nnergy.serve returns: the report of `nnergy serve` as Python objects.

    totals       ServeTotals (energy_per_output_token_j, output_tokens_per_s, ttft_s, ...)
    deployment   dict: device, gpus, tp, pp, ep, replicas, precision, math, weight_only,
                 kv_precision, engine, engine_release, clock_mhz, power_scope
    model        dict: id, model_type, source, layers, parameter counts (total and active)
    phases       DataFrame: prefill and decode, energy per request (J) and time (s)
    parts        DataFrame: energy (J) and time (s) per request by part (attention, mlp,
                 communication, host, idle ...)
    operations   DataFrame: one decode step's operations on one GPU (layers=True)
    batch_sweep  DataFrame: one row per batch of sweep_batch (empty without)
    clock_sweep  DataFrame: one row per core clock (sweep_clocks=True; empty without)
    energy_optimal_clock_mhz   the clock of least energy per token (sweep_clocks=True)
    memory       dict of bytes per GPU: weights, KV budget, KV cache in use, largest batch
    notes        list of str: how every figure was obtained and what was assumed
    text(), to_csv(), to_dict(), to_json(), write_html(path)

    Every figure is predicted (nnergy's analytical model with its LLM calibration); `notes`
    says which model and how well it did out of sample on published serving measurements.
    """

    def __init__(self, report):
        self._report = report
        self._dict = json.loads(report.to_json())

    @property
    def totals(self):
        return ServeTotals(self._dict["totals"])

    @property
    def deployment(self):
        return dict(self._dict["deployment"])

    @property
    def model(self):
        return dict(self._dict["model"])

    @property
    def workload(self):
        return dict(self._dict["workload"])

    @property
    def phases(self):
        return dataframe([dict(phase=k, **v) for k, v in self._dict["phases"].items()])

    @property
    def parts(self):
        return dataframe([dict(part=k, **v) for k, v in self._dict["parts"].items()])

    @property
    def operations(self):
        return dataframe(self._dict["operations"])

    @property
    def batch_sweep(self):
        return dataframe(self._dict["batch_sweep"])

    @property
    def clock_sweep(self):
        return dataframe(self._dict["clock_sweep"])

    @property
    def energy_optimal_clock_mhz(self):
        return self._dict["energy_optimal_clock_mhz"]

    @property
    def memory(self):
        return dict(self._dict["memory"])

    @property
    def notes(self):
        return [self._dict["method"]] + list(self._dict["notes"])

    @property
    def context(self):
        return dict(self._dict["context"])

    def text(self, layers=False):
        """The text report of `nnergy serve` (layers: one decode step's operations too)."""
        return self._report.render_text(layers)

    def to_csv(self):
        """The CSV of `nnergy serve --csv`: one row per sweep point, or the totals."""
        return self._report.render_csv()

    def to_dict(self):
        """The JSON document of `nnergy serve --json`."""
        return json.loads(json.dumps(self._dict))

    def to_json(self, indent=None):
        return json.dumps(self._dict, indent=indent)

    def write_html(self, path):
        """Writes the self-contained HTML report of `nnergy serve --html`."""
        self._report.write_html(os.fspath(path))

    def __str__(self):
        return self.text()

    def __repr__(self):
        t, d = self._dict["totals"], self._dict["deployment"]
        return (f"<nnergy.Serving {self._dict['model']['id']} on {d['gpus']} x {d['device']} "
                f"(tp {d['tp']}, {d['precision']}): {t['energy_per_output_token_j'] * 1e3:.4g} "
                f"mJ/token, {t['output_tokens_per_s']:.4g} tokens/s, ITL "
                f"{t['time_per_output_token_s'] * 1e3:.4g} ms, predicted>")


def _config_path(model, directory):
    """A catalog name or config.json path as given; a dict or a transformers config object
    (anything with to_dict()) written to a config.json in `directory`."""
    if isinstance(model, (str, os.PathLike)):
        return os.fspath(model), repr(os.fspath(model))
    config = model.to_dict() if hasattr(model, "to_dict") else model
    if not isinstance(config, dict):
        raise _core.InvalidInput(
            f"model: expected a Hugging Face id, a config.json path, a dict or a transformers "
            f"config (with to_dict()), found {type(model).__name__}")
    path = os.path.join(directory, "config.json")
    with open(path, "w") as f:
        json.dump(config, f, default=str)
    name = config.get("_name_or_path") or config.get("model_type") or "config"
    return path, f"<config {name}>"


def serve(model, *, input_tokens, output_tokens, device=None, gpus=None, tp=None, pp=None,
          ep=None, precision=None, kv_precision=None, engine=None, workload="serving",
          max_batch=None, max_batched_tokens=None, clock_mhz=None, sweep_clocks=False,
          sweep_batch=None, power_scope="gpu", layers=False, devices_file=None, html=None):
    """Predicts serving `model` on GPUs (api::serve, `nnergy serve`).

    model          a Hugging Face id of the catalog (nnergy.language_models(); suffixes such as
                   -Instruct, -FP8 or a date resolve), the path of a config.json, or the config
                   itself (a dict, or a transformers config object)
    input_tokens, output_tokens   prompt and generated tokens per request
    device         GPU id, alias or nvidia-smi name (default h100-sxm, said in the notes)
    gpus, tp, pp, ep   GPUs in all; tensor, pipeline, expert parallelism (default: the
                   smallest tp that fits, one replica)
    precision      weights: bf16, fp16, fp8, nvfp4, mxfp4, int8, int4 (default: the checkpoint's)
    kv_precision   KV cache: bf16, fp16 or fp8
    engine         vllm (current), vllm-0.5.4, tensorrt-llm, sglang, hf-eager
    workload       "serving" (continuous batching, steady state) or "offline" (one batch)
    max_batch      running sequences per replica, or the offline batch (default: largest that fits)
    sweep_batch    batches to predict too (list); sweep_clocks: predict over the core clocks
    power_scope    "gpu" (NVML) or "node" (the servers' at the wall, estimated host share)
    layers         list one decode step's operations (Serving.operations)
    html           also write the HTML report to this path

    Returns Serving. Raises nnergy.InvalidInput naming the argument for an unknown model,
    device or engine, a precision the GPU cannot run, parallelism that does not divide the
    model, a model or batch that does not fit, or token counts out of range.
    """
    with tempfile.TemporaryDirectory(prefix="nnergy-serve-") as directory:
        path, shown = _config_path(model, directory)
        report = _core.serve(
            path, device=device, gpus=gpus, tp=tp, pp=pp, ep=ep, precision=precision,
            kv_precision=kv_precision, engine=engine, workload=workload,
            input_tokens=float(input_tokens), output_tokens=float(output_tokens),
            max_batch=max_batch, max_batched_tokens=max_batched_tokens, clock_mhz=clock_mhz,
            sweep_clocks=sweep_clocks, sweep_batch=[int(b) for b in (sweep_batch or [])],
            power_scope=power_scope, layers=layers, devices_file=os.fspath(devices_file or ""),
            command_line=f"nnergy.serve({shown}, input_tokens={input_tokens}, "
                         f"output_tokens={output_tokens})")
    result = Serving(report)
    if html:
        result.write_html(html)
    return result


def language_models():
    """The embedded language models (DataFrame, `nnergy serve --list-models`): id, family,
    model_type, parameter counts (billions, computed and published), context_tokens,
    weight_format, layers."""
    return dataframe(json.loads(_core.list_models_json())["models"])
