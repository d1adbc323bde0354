#!/usr/bin/env python3
"""Turns tools/gpu/network_campaign.py's JSON lines into measurement records.

    tools/gpu/campaign_records.py OUT.json CAMPAIGN.jsonl[:CONTEXT.json] ...

Writes a JSON list in the format of data/calibration/measured_public.json (README there), three
records per run: time_per_iteration (ms), avg_power (W) and energy_per_iteration (J), grade A,
ids "<gpu-tag>-NNNN-{t,p,e}". Runs that failed (an "error" field) are left out and counted.
`nnergy evaluate --published OUT.json` then scores predictions against them.
"""

import json
import os
import sys

PRECISION_TEXT = {
    # precision_of() in src/nnergy/learn/published_times.cc reads these: "tf32", "bf16", "fp32".
    "fp32": "fp32 (strict: TensorFloat-32 disabled in cuDNN and cuBLAS)",
    "tf32": "tf32 (torch.backends.cudnn/cuda.matmul.allow_tf32 = True)",
    "bf16": {"inference": "bf16 (weights and activations)",
             "training": "bf16 autocast (fp32 weights, torch.autocast)"},
}


def precision_text(precision, mode):
    text = PRECISION_TEXT[precision]
    return text[mode] if isinstance(text, dict) else text


def records_of(path, context, line_no, run, tag, index):
    base = {
        "source": f"nnergy tools/gpu/network_campaign.py, measured {context['date_utc'][:10]} "
                  f"(data/measured/{tag}/{os.path.basename(path)})",
        "location": f"{os.path.basename(path)} line {line_no}",
        "gpu": context["gpu_name"],
        "network": run["network"],
        "mode": run["mode"],
        "batch": run["batch"],
        "input_shape": (f"{run['batch']}x3x224x224" if run["input"].startswith("float32")
                        else f"{run['batch']}x128 input_ids (seq 128)"),
        "precision": precision_text(run["precision"], run["mode"]),
        "framework": (f"PyTorch {context['torch']} eager, CUDA {context['cuda']}, cuDNN "
                      f"{context['cudnn']}, driver {context['driver']}; input on the GPU; "
                      "cudnn.benchmark off"),
        "clock_mhz": round(run["sm_clock_mhz_mean"]) if "sm_clock_mhz_mean" in run else None,
        "measured": True,
        "grade": "A",
        "n_samples": run["iterations"],
    }
    notes = (f"{run['iterations']} iterations in a {run['window_s']:.2f} s window after warm-up; "
             f"SM clock {run.get('sm_clock_mhz_min')}-{run.get('sm_clock_mhz_max')} MHz, "
             f"max {run.get('temperature_c_max')} C")
    if run.get("clock_event_reasons_or"):
        notes += (f"; clock-event reasons seen during the window: "
                  f"0x{run['clock_event_reasons_or']:x} (0x4 = software power cap)")
    t_ms = run["time_per_iteration_s"] * 1e3
    rid = f"{tag}-{index:04d}"
    return [
        dict(base, id=rid + "-t", quantity="time_per_iteration", value=round(t_ms, 6), unit="ms",
             value_si=run["time_per_iteration_s"], unit_si="s",
             derivation="window wall time / iterations",
             notes=notes + "; wall time of the window (torch.cuda.synchronize at both ends)"),
        dict(base, id=rid + "-p", quantity="avg_power", value=round(run["avg_power_w"], 3),
             unit="W", value_si=run["avg_power_w"], unit_si="W",
             derivation="NVML energy counter over the window / window time",
             notes=notes + "; board power from nvmlDeviceGetTotalEnergyConsumption, read every "
                           "2 ms and interpolated between its 100 ms updates"),
        dict(base, id=rid + "-e", quantity="energy_per_iteration",
             value=round(run["energy_per_iteration_j"], 6), unit="J",
             value_si=run["energy_per_iteration_j"], unit_si="J",
             derivation="NVML energy counter over the window / iterations",
             notes=notes + "; board energy (whole GPU, idle share included)"),
    ]


def main(argv):
    out_path, inputs = argv[1], argv[2:]
    tag = os.path.basename(os.path.dirname(os.path.abspath(out_path)))
    records, failed, index = [], 0, 0
    for spec in inputs:
        path, _, ctx_path = spec.partition(":")
        ctx_path = ctx_path or path.replace(".jsonl", "_context.json")
        with open(ctx_path) as f:
            context = json.load(f)
        with open(path) as f:
            for line_no, line in enumerate(f, 1):
                run = json.loads(line)
                if "error" in run:
                    failed += 1
                    continue
                index += 1
                records += records_of(path, context, line_no, run, tag, index)
    with open(out_path, "w") as f:
        json.dump(records, f, indent=1)
        f.write("\n")
    print(f"{out_path}: {len(records)} records from {index} runs ({failed} failed runs left out)")


if __name__ == "__main__":
    main(sys.argv)
