"""Records the committed real trace tests/fixtures/account/resnet18_cpu/ with nnergy_torch.

    NNERGY_BIN=build/h6/apps/nnergy/nnergy PYTHONPATH=python /usr/bin/python3 \
        tools/account_record_fixture.py tests/fixtures/account/resnet18_cpu

ResNet-18 (torchvision, random weights) at batch 2, 3x64x64, two SGD training steps on the CPU,
with a synthetic constant 100 W power source (this machine has no GPU and no RAPL).
"""
import sys

import torch
import torchvision

import nnergy_torch


def main(out):
    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = torchvision.models.resnet18(num_classes=10)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.randn(2, 3, 64, 64)
    y = torch.tensor([1, 3])
    loss_fn = torch.nn.CrossEntropyLoss()
    with nnergy_torch.session(model, out, power_sources=["synthetic:constant=100"],
                              interval_ms=5) as s:
        for _ in range(2):
            optimizer.zero_grad()
            loss = loss_fn(model(x), y)
            loss.backward()
            optimizer.step()
            s.step()


if __name__ == "__main__":
    main(sys.argv[1])
