#!/usr/bin/env python3
"""A 30 s GPU load in phases, for comparing power readings (tools/gpu/measurement_check.sh).

Phases (printed with their UNIX start times): idle 5 s; bf16 GEMM 8192^3 for 8 s; idle 3 s;
device-to-device copy of 2 GiB for 6 s; ResNet-50 fp32 training at batch 64 for 8 s. The steps
make the averaging window of each reading visible.
"""

import sys
import time

import torch
import torchvision


def phase(name, seconds, fn):
    print(f"phase {name} start_unix_s {time.time():.6f}", flush=True)
    t_end = time.monotonic() + seconds
    n = 0
    while time.monotonic() < t_end:
        fn()
        n += 1
        if n % 8 == 0:
            torch.cuda.synchronize()
    torch.cuda.synchronize()
    print(f"phase {name} end_unix_s {time.time():.6f} iterations {n}", flush=True)


def main():
    dev = torch.device("cuda:0")
    a = torch.randn(8192, 8192, device=dev, dtype=torch.bfloat16)
    b = torch.randn(8192, 8192, device=dev, dtype=torch.bfloat16)
    src = torch.randn(2**29, device=dev)  # 2 GiB of float32
    dst = torch.empty_like(src)
    with torch.device(dev):
        model = torchvision.models.resnet50()
    x = torch.randn(64, 3, 224, 224, device=dev)
    y = torch.randint(0, 1000, (64,), device=dev)
    opt = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)
    loss_fn = torch.nn.CrossEntropyLoss()

    def train():
        loss_fn(model(x), y).backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    torch.cuda.synchronize()
    phase("idle", 5, lambda: time.sleep(0.01))
    phase("gemm_bf16", 8, lambda: torch.mm(a, b))
    phase("idle", 3, lambda: time.sleep(0.01))
    phase("copy_2GiB", 6, lambda: dst.copy_(src))
    phase("resnet50_training_fp32_b64", 8, train)
    return 0


if __name__ == "__main__":
    sys.exit(main())
