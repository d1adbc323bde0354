#!/usr/bin/env python3
"""Whole-network time, energy and average power of eager PyTorch on a CUDA GPU.

Runs every (network, precision, mode, batch) of the campaign on ``cuda:0`` with
the input already on the GPU, and writes one JSON line per run to ``--out``
(flushed after each run, so a campaign cut short keeps what it measured).
``tools/gpu/campaign_records.py`` turns those lines into records in the format
of ``data/calibration/measured_public.json`` for ``nnergy evaluate
--published``.

Method
------
* Networks: the zoo's torchvision classifiers (``weights=None``), and
  ``bert_base`` / ``gpt2_small`` from ``tools/export_zoo.py`` at sequence
  length 128, the architectures of ``data/zoo``; then torchvision networks of
  ``data/calibration/networks`` (ResNeXt, Wide ResNet, DenseNet, MnasNet, VGG
  with BatchNorm, SqueezeNet 1.0, ShuffleNet) as time allows.
* Precisions: ``fp32`` (TF32 off for cuDNN and cuBLAS), ``tf32`` (TF32 on for
  both), ``bf16`` (inference: weights and activations in bfloat16; training:
  ``torch.autocast`` to bfloat16 over fp32 weights).
* Modes: ``inference`` (``eval()``, ``torch.inference_mode``) and ``training``
  (``train()``, forward, cross-entropy loss, backward, SGD step with momentum
  0.9, gradients set to None).  cuDNN benchmark mode is off (PyTorch's
  default), memory format is PyTorch's default (NCHW).
* Timing: warm-up of at least 3 iterations and 0.2 s, then a window of at
  least 5 iterations and ``--window-s`` seconds with no synchronisation
  inside it; the time per iteration is the window's wall time (after
  ``torch.cuda.synchronize``) over its iterations, so host launch overhead is
  included as in a real loop.
* Energy: a sampler thread reads NVML's total energy counter
  (``nvmlDeviceGetTotalEnergyConsumption``, mJ) every 2 ms and keeps the
  times at which it changed; the window's energy is the counter interpolated
  linearly between those change points at the window's two ends.  Average
  power is that energy over the window's time.  The same thread reads the SM
  clock, the temperature and the clock-event (throttle) reasons every 50 ms.

Needs PyTorch with CUDA, torchvision and nvidia-ml-py (``pynvml``).
"""

import argparse
import bisect
import json
import os
import platform
import subprocess
import sys
import threading
import time

import pynvml
import torch
import torch.nn as nn
import torchvision

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from export_zoo import BertBase, GPT2Small  # noqa: E402  (the zoo's transformer definitions)

SEQ_LEN = 128
ZOO = ["alexnet", "vgg16", "vgg19", "resnet18", "resnet34", "resnet50", "resnet101",
       "resnet152", "mobilenet_v2", "mobilenet_v3_large", "efficientnet_b0", "densenet121",
       "convnext_base", "squeezenet1_1", "googlenet", "shufflenet_v2_x1_0", "vit_b_16",
       "swin_t", "bert_base", "gpt2_small"]
CALIBRATION = ["resnext50_32x4d", "wide_resnet50_2", "densenet169", "densenet201", "densenet161",
               "mnasnet1_0", "vgg11", "vgg13", "vgg16_bn", "vgg19_bn", "squeezenet1_0",
               "shufflenet_v2_x2_0", "resnext101_32x8d", "wide_resnet101_2", "mnasnet0_5",
               "shufflenet_v2_x0_5", "vgg11_bn", "vgg13_bn", "mnasnet0_75", "mnasnet1_3",
               "shufflenet_v2_x1_5"]


class CounterSampler(threading.Thread):
    """Reads NVML's energy counter every 2 ms, clocks and throttle reasons every 50 ms."""

    def __init__(self, handle):
        super().__init__(daemon=True)
        self.handle = handle
        self.lock = threading.Lock()
        self.change_t = []  # monotonic s at which the counter was seen to change
        self.change_mj = []
        self.status = []  # (t, sm_mhz, temp_c, reasons, power_mw)
        self.stop_flag = False

    def run(self):
        last = None
        next_status = 0.0
        while not self.stop_flag:
            t = time.monotonic()
            e = pynvml.nvmlDeviceGetTotalEnergyConsumption(self.handle)
            if e != last:
                with self.lock:
                    self.change_t.append(t)
                    self.change_mj.append(e)
                last = e
            if t >= next_status:
                sm = pynvml.nvmlDeviceGetClockInfo(self.handle, pynvml.NVML_CLOCK_SM)
                temp = pynvml.nvmlDeviceGetTemperature(self.handle, pynvml.NVML_TEMPERATURE_GPU)
                reasons = pynvml.nvmlDeviceGetCurrentClocksEventReasons(self.handle) \
                    if hasattr(pynvml, "nvmlDeviceGetCurrentClocksEventReasons") \
                    else pynvml.nvmlDeviceGetCurrentClocksThrottleReasons(self.handle)
                power = pynvml.nvmlDeviceGetPowerUsage(self.handle)
                with self.lock:
                    self.status.append((t, sm, temp, reasons, power))
                next_status = t + 0.05
            time.sleep(0.002)

    def wait_past(self, t, timeout_s=1.0):
        """Waits until the counter has changed after monotonic time `t` (so that the window's
        end lies between two change points) or `timeout_s` has passed."""
        end = time.monotonic() + timeout_s
        while time.monotonic() < end:
            with self.lock:
                if self.change_t and self.change_t[-1] > t:
                    return True
            time.sleep(0.002)
        return False

    def energy_j(self, t0, t1):
        """Counter energy between monotonic times t0 and t1, interpolated between changes."""
        with self.lock:
            ts, es = list(self.change_t), list(self.change_mj)
        return (self._at(ts, es, t1) - self._at(ts, es, t0)) / 1000.0

    @staticmethod
    def _at(ts, es, t):
        i = bisect.bisect_right(ts, t)
        if i == 0:
            return es[0]
        if i == len(ts):
            return es[-1]
        f = (t - ts[i - 1]) / (ts[i] - ts[i - 1])
        return es[i - 1] + f * (es[i] - es[i - 1])

    def status_between(self, t0, t1):
        with self.lock:
            rows = [s for s in self.status if t0 <= s[0] <= t1]
        if not rows:
            return {}
        reasons = 0
        for r in rows:
            reasons |= r[3]
        return {"sm_clock_mhz_mean": sum(r[1] for r in rows) / len(rows),
                "sm_clock_mhz_min": min(r[1] for r in rows),
                "sm_clock_mhz_max": max(r[1] for r in rows),
                "temperature_c_max": max(r[2] for r in rows),
                "clock_event_reasons_or": reasons,
                "nvml_power_usage_w_mean": sum(r[4] for r in rows) / len(rows) / 1000.0,
                "status_samples": len(rows)}

    def update_periods_s(self):
        with self.lock:
            ts = list(self.change_t)
        return [b - a for a, b in zip(ts, ts[1:])]


def build(name, device):
    """The network with its parameters created on `device` (initialising a large network on
    the CPU would take longer than measuring it)."""
    with torch.device(device):
        if name == "bert_base":
            return BertBase(), "tokens"
        if name == "gpt2_small":
            return GPT2Small(), "tokens"
        ctor = getattr(torchvision.models, name)
        kwargs = {"weights": None}
        if name == "googlenet":
            kwargs.update(aux_logits=False, init_weights=False)
        return ctor(**kwargs), "image"


def set_precision(precision):
    tf32 = precision == "tf32"
    torch.backends.cuda.matmul.allow_tf32 = tf32
    torch.backends.cudnn.allow_tf32 = tf32


def make_step(model, kind, precision, mode, batch, device):
    if kind == "image":
        x = torch.randn(batch, 3, 224, 224, device=device)
        target = torch.randint(0, 1000, (batch,), device=device)
    else:
        x = torch.randint(0, 30000, (batch, SEQ_LEN), device=device)
        target = None
    if mode == "inference":
        model.eval()
        if precision == "bf16":
            model.to(torch.bfloat16)
            if kind == "image":
                x = x.to(torch.bfloat16)

        def step():
            with torch.inference_mode():
                model(x)
        return step, None
    model.train()
    opt = torch.optim.SGD(model.parameters(), lr=1e-4, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()

    def loss_of(out):
        if out.dim() == 3:  # gpt2_small's logits [batch, seq, vocab]: next-token loss
            return loss_fn(out[:, :-1].reshape(-1, out.size(-1)), x[:, 1:].reshape(-1))
        if target is not None:
            return loss_fn(out, target)
        return out.float().pow(2).mean()  # bert_base's pooled output

    def step():
        if precision == "bf16":
            with torch.autocast(device_type="cuda", dtype=torch.bfloat16):
                loss = loss_of(model(x))
        else:
            loss = loss_of(model(x))
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
    return step, opt


def timed_window(step, min_iters, min_s):
    torch.cuda.synchronize()
    t0 = time.monotonic()
    n = 0
    while True:
        step()
        n += 1
        if n >= min_iters and time.monotonic() - t0 >= min_s:
            torch.cuda.synchronize()
            t1 = time.monotonic()
            if t1 - t0 >= min_s:
                return t0, t1, n


def run_one(sampler, name, precision, mode, batch, window_s, device):
    set_precision(precision)
    model, kind = build(name, device)
    step, opt = make_step(model, kind, precision, mode, batch, device)
    torch.cuda.reset_peak_memory_stats()
    timed_window(step, 3, 0.2)  # warm-up
    t0, t1, n = timed_window(step, 5, window_s)
    bracketed = sampler.wait_past(t1)
    energy = sampler.energy_j(t0, t1)
    row = {"network": name, "precision": precision, "mode": mode, "batch": batch,
           "input": "float32 [batch, 3, 224, 224]" if kind == "image"
           else f"int64 input_ids [batch, {SEQ_LEN}]",
           "iterations": n, "window_s": t1 - t0, "time_per_iteration_s": (t1 - t0) / n,
           "energy_j": energy, "energy_per_iteration_j": energy / n,
           "avg_power_w": energy / (t1 - t0), "energy_window_bracketed": bracketed,
           "max_memory_allocated_gib": torch.cuda.max_memory_allocated() / 2**30,
           "monotonic_start_s": t0, "monotonic_end_s": t1, "epoch_end_s": time.time()}
    row.update(sampler.status_between(t0, t1))
    del step, opt, model
    return row


def plan(args):
    nets = ZOO if not args.only else args.only.split(",")
    order = []
    for precision in args.precisions.split(","):
        for name in nets:
            for mode in args.modes.split(","):
                for batch in [int(b) for b in args.batches.split(",")]:
                    order.append((name, precision, mode, batch))
    if args.calibration_networks:
        for precision in ["fp32", "bf16"]:
            for name in CALIBRATION:
                for mode in args.modes.split(","):
                    for batch in [32, 128]:
                        order.append((name, precision, mode, batch))
    return order


def context(handle):
    def smi(*a):
        try:
            return subprocess.run(["nvidia-smi", *a], capture_output=True, text=True,
                                  timeout=30).stdout.strip()
        except (OSError, subprocess.SubprocessError) as e:
            return f"nvidia-smi failed: {e}"
    props = torch.cuda.get_device_properties(0)
    return {"date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "gpu_name": pynvml.nvmlDeviceGetName(handle),
            "driver": pynvml.nvmlSystemGetDriverVersion(),
            "power_limit_w": pynvml.nvmlDeviceGetPowerManagementLimit(handle) / 1000.0,
            "sm_count": props.multi_processor_count,
            "gpu_memory_gib": props.total_memory / 2**30,
            "torch": torch.__version__, "torchvision": torchvision.__version__,
            "cuda": torch.version.cuda, "cudnn": torch.backends.cudnn.version(),
            "python": platform.python_version(), "cpu": platform.processor() or platform.machine(),
            "cpu_count": os.cpu_count(), "kernel": platform.release(),
            "cudnn_benchmark": torch.backends.cudnn.benchmark,
            "nvidia_smi_query": smi("--query-gpu=name,pci.bus_id,driver_version,pstate,"
                                    "clocks.max.sm,clocks.max.mem,power.limit,"
                                    "power.default_limit,persistence_mode,compute_mode,"
                                    "temperature.gpu", "--format=csv"),
            "nvidia_smi_processes": smi("--query-compute-apps=pid,name,used_memory",
                                        "--format=csv")}


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", required=True, help="JSON lines written here, one per run")
    p.add_argument("--context-out", required=True, help="the run's context block (JSON)")
    p.add_argument("--deadline-s", type=float, default=480, help="stop starting runs after this")
    p.add_argument("--window-s", type=float, default=0.5)
    p.add_argument("--batches", default="1,8,32,128")
    p.add_argument("--precisions", default="fp32,bf16,tf32")
    p.add_argument("--modes", default="inference,training")
    p.add_argument("--only", default="", help="comma-separated networks instead of the zoo")
    p.add_argument("--calibration-networks", action="store_true")
    p.add_argument("--skip-done", default="", help="JSON lines of an earlier campaign: runs "
                   "measured there (without error) are not run again")
    args = p.parse_args()

    start = time.monotonic()
    pynvml.nvmlInit()
    handle = pynvml.nvmlDeviceGetHandleByIndex(0)
    device = torch.device("cuda:0")
    torch.manual_seed(0)
    sampler = CounterSampler(handle)
    sampler.start()
    with open(args.context_out, "w") as f:
        json.dump(context(handle), f, indent=1)
    order = plan(args)
    if args.skip_done:
        with open(args.skip_done) as f:
            done_before = {(r["network"], r["precision"], r["mode"], r["batch"])
                           for r in map(json.loads, f) if "error" not in r}
        order = [o for o in order if o not in done_before]
    done = failed = 0
    with open(args.out, "w") as out:
        for name, precision, mode, batch in order:
            if time.monotonic() - start > args.deadline_s:
                print(f"deadline reached: {done} runs done, {len(order) - done - failed} left",
                      flush=True)
                break
            try:
                row = run_one(sampler, name, precision, mode, batch, args.window_s, device)
                done += 1
                print(f"{name:20s} {precision:5s} {mode:9s} b{batch:<4d} "
                      f"{row['time_per_iteration_s'] * 1e3:9.3f} ms {row['avg_power_w']:6.1f} W "
                      f"{row.get('sm_clock_mhz_mean', 0):6.0f} MHz", flush=True)
            except torch.cuda.OutOfMemoryError as e:
                row = {"network": name, "precision": precision, "mode": mode, "batch": batch,
                       "error": f"out of memory: {str(e)[:200]}"}
                failed += 1
            except Exception as e:  # noqa: BLE001 (recorded, the campaign goes on)
                row = {"network": name, "precision": precision, "mode": mode, "batch": batch,
                       "error": f"{type(e).__name__}: {str(e)[:300]}"}
                failed += 1
                print(f"{name} {precision} {mode} b{batch}: {row['error']}", flush=True)
            out.write(json.dumps(row) + "\n")
            out.flush()
            torch.cuda.empty_cache()
    periods = sorted(sampler.update_periods_s())
    sampler.stop_flag = True
    with open(args.context_out) as f:
        ctx = json.load(f)
    ctx["energy_counter_update_period_ms_median"] = \
        periods[len(periods) // 2] * 1e3 if periods else None
    ctx["energy_counter_updates"] = len(periods)
    ctx["runs_done"] = done
    ctx["runs_failed"] = failed
    ctx["runs_planned"] = len(order)
    ctx["campaign_s"] = time.monotonic() - start
    with open(args.context_out, "w") as f:
        json.dump(ctx, f, indent=1)
    print(f"{done} runs, {failed} failed, counter update period median "
          f"{ctx['energy_counter_update_period_ms_median']} ms", flush=True)


if __name__ == "__main__":
    main()
