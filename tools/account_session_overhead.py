"""Slowdown of a training step under nnergy_torch.session (module hooks, profiler, nnergy monitor).

    NNERGY_BIN=build/release/apps/nnergy/nnergy PYTHONPATH=python /usr/bin/python3 \
        tools/account_session_overhead.py [--steps 15] [--warmup 3] [--rounds 3]

ResNet-18 (torchvision, random weights), batch 2 at 3x64x64, SGD, one CPU thread. Alternates
rounds without and with the session in ABBA order (so drift hits both alike) and prints the
median step time of each and the slowdown, in wall time and in the process's CPU time (which
leaves out the monitor process but also the noise of other load on a shared machine). The power source is synthetic (no GPU or RAPL here);
the monitor runs as a separate process and its sampling cost is included.
"""
import argparse
import statistics
import tempfile
import time

import torch
import torchvision

import nnergy_torch


def step_times(model, optimizer, x, y, steps, warmup):
    loss_fn = torch.nn.CrossEntropyLoss()
    times = []
    for k in range(warmup + steps):
        start = time.perf_counter()
        start_cpu = time.process_time()
        optimizer.zero_grad()
        loss_fn(model(x), y).backward()
        optimizer.step()
        if k >= warmup:
            times.append((time.perf_counter() - start, time.process_time() - start_cpu))
    return times


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=15)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = torchvision.models.resnet18(num_classes=10)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.randn(2, 3, 64, 64)
    y = torch.tensor([1, 3])
    plain, recorded = [], []

    def run_plain():
        plain.extend(step_times(model, optimizer, x, y, args.steps, args.warmup))

    def run_recorded():
        with tempfile.TemporaryDirectory() as out:
            with nnergy_torch.session(model, out, power_sources=["synthetic:constant=100"]):
                recorded.extend(step_times(model, optimizer, x, y, args.steps, args.warmup))

    # ABBA order: a drift in step time (the weights change as SGD runs, the machine's load
    # changes) then favours neither side.
    for r in range(args.rounds):
        for run in (run_plain, run_recorded) if r % 2 == 0 else (run_recorded, run_plain):
            run()
    for label, column in (("wall", 0), ("process CPU", 1)):
        p = statistics.median(t[column] for t in plain)
        r = statistics.median(t[column] for t in recorded)
        print(f"{label}: median step without session {p * 1e3:.2f} ms, with session "
              f"{r * 1e3:.2f} ms ({len(plain)} steps each): slowdown {100 * (r / p - 1):.1f} %")


if __name__ == "__main__":
    main()
