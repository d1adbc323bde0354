#!/usr/bin/env python3
"""Records real CUDA training steps with nnergy_torch.session for `nnergy account`.

ResNet-50, batch 64, fp32 weights with bf16 autocast, SGD with momentum, input on the GPU:
5 warm-up steps, then 10 steps inside the session (Kineto trace + `nnergy monitor` NVML power at
10 ms). Usage: training_step_session.py OUT_DIR (needs $NNERGY_BIN or nnergy on PATH).
"""

import os
import sys

import torch
import torchvision

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
import nnergy_torch  # noqa: E402


def main(out):
    dev = torch.device("cuda:0")
    with torch.device(dev):
        model = torchvision.models.resnet50()
    x = torch.randn(64, 3, 224, 224, device=dev)
    y = torch.randint(0, 1000, (64,), device=dev)
    opt = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)
    loss_fn = torch.nn.CrossEntropyLoss()

    def step():
        with torch.autocast(device_type="cuda", dtype=torch.bfloat16):
            loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    for _ in range(5):
        step()
    torch.cuda.synchronize()
    with nnergy_torch.session(model, out=out, power_sources=["nvml"], interval_ms=10):
        for _ in range(10):
            step()
        torch.cuda.synchronize()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
