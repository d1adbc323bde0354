"""Times the Python package: `import nnergy` (without torch), nnergy.predict on a zoo model and
on torchvision's ResNet-18 (the export included), and Monitor's cost per window.

    PYTHONPATH=build/release/python /usr/bin/python3 tools/python_package_timing.py [--quick]

Prints medians (and the spread) of repeated runs; the figures in python/README.md come from it.
"""

import argparse
import statistics
import subprocess
import sys
import time


def median_and_range(values):
    return statistics.median(values), min(values), max(values)


def report(label, values, unit="ms", scale=1e3):
    m, lo, hi = median_and_range(values)
    print(f"{label}: median {m * scale:.3g} {unit} (min {lo * scale:.3g}, max {hi * scale:.3g}, "
          f"n={len(values)})")


def import_times(n):
    code = ("import time, sys; t = time.perf_counter(); import nnergy; "
            "d = time.perf_counter() - t; assert 'torch' not in sys.modules; print(d)")
    return [float(subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                                 text=True).stdout) for _ in range(n)]


def timed(call, n):
    values = []
    for _ in range(n):
        t = time.perf_counter()
        call()
        values.append(time.perf_counter() - t)
    return values


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="fewer repetitions")
    args = parser.parse_args()
    n = 5 if args.quick else 15

    report("import nnergy (fresh interpreter, torch not imported)", import_times(n))

    import nnergy
    nnergy.predict("resnet50", batch=32)  # warm: catalog and zoo file in the page cache
    report("nnergy.predict('resnet50', batch=32)",
           timed(lambda: nnergy.predict("resnet50", batch=32), n))

    import torch
    try:
        import torchvision
        model = torchvision.models.resnet18()
        name = "torchvision resnet18"
    except ImportError:
        model = None
    if model is not None:
        x = torch.randn(1, 3, 224, 224)
        nnergy.predict(model, x, batch=32)
        report(f"nnergy.predict({name} module, export included, batch=32)",
               timed(lambda: nnergy.predict(model, x, batch=32), max(3, n // 3)))
        report(f"nnergy.predict({name} module, training mode)",
               timed(lambda: nnergy.predict(model, x, batch=32, mode="training"),
                     max(3, n // 3)))

    windows = 10000 if not args.quick else 2000
    for interval_ms in (1.0, 20.0):
        count = windows if interval_ms == 1.0 else max(50, windows // 100)
        mon = nnergy.Monitor("synthetic:constant=250", interval_ms=interval_ms)
        t = time.perf_counter()
        cpu = time.thread_time()
        for _ in range(count):
            mon.end_window(mon.begin_window("w"))
        cpu = time.thread_time() - cpu
        elapsed = time.perf_counter() - t
        begin = timed(lambda: mon.begin_window("b"), 1000)
        mon.close()
        print(f"Monitor, {interval_ms:g} ms sampling: {count} begin/end windows in "
              f"{elapsed:.2f} s = {elapsed / count * 1e3:.3f} ms per window (end waits for the "
              f"next sample), {cpu / count * 1e6:.0f} µs of the caller's CPU per window; "
              f"begin_window alone median "
              f"{statistics.median(begin) * 1e6:.1f} µs")


if __name__ == "__main__":
    main()
