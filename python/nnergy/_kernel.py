"""nnergy.kernel: one GPU kernel's time, board power and energy by nnergy's kernel model."""

import json

from nnergy import _core
from nnergy._records import Record


class KernelTotals(Record):
    """time_s, avg_power_w, energy_j with their 1-sigma (time_std_s, avg_power_std_w,
    energy_std_j), flop_count and byte_count."""


class Kernel:
    """What nnergy.kernel returns: the `nnergy kernel ... --json` document as Python objects.

    totals     KernelTotals (time_s, avg_power_w, energy_j and their _std, flop_count, ...)
    achieved   dict: tflop_per_s, gb_per_s, peak_share
    bound      "compute", "memory", "latency" or "power cap"
    shape      dict of the kernel's dimensions; device, engine, format
    clock_mhz  the clock it runs at (lower when the power limit binds)
    notes      list of str: which fitted parameters and how well they did out of sample
    to_dict(), to_json()
    """

    def __init__(self, document):
        self._dict = json.loads(document)

    totals = property(lambda self: KernelTotals(self._dict["totals"]))
    achieved = property(lambda self: dict(self._dict["achieved"]))
    bound = property(lambda self: self._dict["bound"])
    shape = property(lambda self: dict(self._dict["shape"]))
    device = property(lambda self: dict(self._dict["device"]))
    engine = property(lambda self: self._dict["engine"])
    format = property(lambda self: self._dict["format"])
    clock_mhz = property(lambda self: self._dict["clock_mhz"])
    notes = property(lambda self: list(self._dict["notes"]))

    def to_dict(self):
        """The `nnergy kernel --json` document (a copy)."""
        return json.loads(json.dumps(self._dict))

    def to_json(self):
        return json.dumps(self._dict, indent=2)

    def __repr__(self):
        t = self._dict["totals"]
        return (f"<nnergy.Kernel {self._dict['kernel']} {self._dict['format']} on "
                f"{self._dict['device']['id']}: {t['time_s'] * 1e6:.3g} us, "
                f"{t['avg_power_w']:.0f} W, {t['energy_j']:.3g} J>")


def kernel(kind, *, device, engine=None, clock_mhz=None, devices_file=None, precision="bf16",
           m=None, n=None, k=None, batch=1, phase="prefill", seq=None, queries=None, heads=32,
           kv_heads=8, head_dim=128, window=0, kv_precision="bf16", bytes=None, gpus=8,
           tokens=None, hidden=None, inter=None, topk=None, experts=None, ep=1, tp=1,
           routing="balanced"):
    """Predicts one kernel (api::kernel_gemm, kernel_attention, kernel_moe, kernel_collective;
    `nnergy kernel`).

    kind        "gemm": C[batch][m x n] = A[m x k] . B[k x n] (m, n, k required);
                "attention": a fused attention kernel: phase ("prefill" or "decode"), batch
                sequences, seq (prefill: the prompt; decode: the tokens already cached),
                queries (a prefill chunk; decode: new tokens, default 1), heads, kv_heads,
                head_dim, window (0: full causal), kv_precision;
                "moe": one fused MoE layer on one GPU: tokens, hidden, inter (one expert's
                intermediate size), topk, experts (required), ep, tp, routing ("balanced",
                "power-law" or "power-law:ALPHA");
                "all-reduce", "all-gather", "reduce-scatter", "all-to-all": bytes (the message
                as nccl-tests sizes it) among gpus GPUs of one node
    device      a catalog GPU id or alias
    precision   gemm: bf16, fp8, fp8_block, nvfp4, int8, int8_wo, int4_wo, tf32, fp32;
                attention: bf16 or fp8 (prefill products)
    engine      whose kernels: tensorrt-llm (default), vllm, sglang, pytorch
    clock_mhz   the SM clock (default: boost)

    Returns a Kernel. Raises nnergy.InvalidInput naming the argument for bad input.
    """
    common = dict(device=device, engine=engine or "", clock_mhz=clock_mhz,
                  devices_file=devices_file or "")
    if kind == "gemm":
        missing = [name for name, v in (("m", m), ("n", n), ("k", k)) if v is None]
        if missing:
            raise _core.InvalidInput(f"kernel('gemm'): {', '.join(missing)}: required")
        line = f"nnergy.kernel('gemm', m={m}, n={n}, k={k}, device={device!r})"
        return Kernel(_core.kernel_gemm_json(float(m), float(n), float(k), float(batch), precision,
                                             command_line=line, **common))
    if kind == "attention":
        if seq is None:
            raise _core.InvalidInput("kernel('attention'): seq: required")
        line = f"nnergy.kernel('attention', phase={phase!r}, seq={seq}, device={device!r})"
        return Kernel(_core.kernel_attention_json(
            phase, float(batch), float(seq), None if queries is None else float(queries),
            float(heads), float(kv_heads), float(head_dim), float(window), precision,
            kv_precision, command_line=line, **common))
    if kind == "moe":
        given = (("tokens", tokens), ("hidden", hidden), ("inter", inter), ("topk", topk),
                 ("experts", experts))
        missing = [name for name, v in given if v is None]
        if missing:
            raise _core.InvalidInput(f"kernel('moe'): {', '.join(missing)}: required")
        line = (f"nnergy.kernel('moe', tokens={tokens}, hidden={hidden}, inter={inter}, "
                f"topk={topk}, experts={experts}, device={device!r})")
        return Kernel(_core.kernel_moe_json(
            float(tokens), float(hidden), float(inter), float(topk), float(experts), float(ep),
            float(tp), routing, precision, command_line=line, **common))
    if kind in ("all-reduce", "all-gather", "reduce-scatter", "all-to-all"):
        if bytes is None:
            raise _core.InvalidInput(f"kernel({kind!r}): bytes: required")
        line = f"nnergy.kernel({kind!r}, bytes={bytes}, gpus={gpus}, device={device!r})"
        return Kernel(_core.kernel_collective_json(kind, float(bytes), int(gpus),
                                                   command_line=line, **common))
    raise _core.InvalidInput(
        f"kernel: {kind!r}: expected a kernel class: 'gemm', 'attention', 'moe', 'all-reduce', "
        f"'all-gather', 'reduce-scatter' or 'all-to-all'")
