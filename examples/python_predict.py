"""nnergy from Python: predict a zoo model and a torch.nn.Module, sweep the clocks, and measure a
block of code with a synthetic power source.

    cmake --build build/release -j2 --target python
    PYTHONPATH=build/release/python /usr/bin/python3 examples/python_predict.py
"""

import time

import nnergy

# A bundled model: ResNet-50 training step on an H100 in bf16, batch 64.
p = nnergy.predict("resnet50", device="h100", batch=64, mode="training", precision="bf16")
t = p.totals
print(f"resnet50: {t.time_s * 1e3:.1f} ms ± {t.time_std_s * 1e3:.1f} ms, "
      f"{t.energy_j:.1f} J ± {t.energy_std_j:.1f} J, {t.power_w:.0f} W per iteration")
print(p.layers.sort_values("energy_j", ascending=False)
      [["module_path", "op_type", "flop_count", "time_s", "energy_j"]].head(5).to_string(index=False))

sweep = p.clock_sweep()
print(f"energy-optimal clock {sweep.energy_optimal_clock_mhz:g} MHz, "
      f"EDP-optimal {sweep.edp_optimal_clock_mhz:g} MHz")

# A PyTorch module, exported in-process with torch.onnx.export (a dynamic batch axis).
try:
    import torch
except ImportError:
    torch = None
if torch is not None:
    model = torch.nn.Sequential(
        torch.nn.Conv2d(3, 16, 3, padding=1), torch.nn.BatchNorm2d(16), torch.nn.ReLU(),
        torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(16, 10))
    q = nnergy.predict(model, torch.randn(1, 3, 32, 32), device="a100", batch=256,
                       mode="training")
    print(f"small CNN: {q.totals.mac_count / 1e9:.2f} GMAC, {q.totals.energy_j * 1e3:.2f} mJ "
          "per training step")

# Measuring: a synthetic 250 W source stands in for NVML/RAPL on a machine without them.
with nnergy.Monitor("synthetic:constant=250") as mon:
    time.sleep(0.5)
print(mon.result)

# Bad input raises nnergy.InvalidInput with the library's message.
try:
    nnergy.predict("resnet50", device="h1000")
except nnergy.InvalidInput as e:
    print("InvalidInput:", e)
