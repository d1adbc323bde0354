#!/usr/bin/env python3
"""Export your own PyTorch model to ONNX for nnergy.

Usage:  python3 export_for_nnergy.py OUTPUT_DIR

Writes OUTPUT_DIR/my_model.onnx (for inference predictions) and
OUTPUT_DIR/my_model_training.onnx (for training predictions), then e.g.

    nnergy predict OUTPUT_DIR/my_model.onnx --device a100-40gb --batch 32
    nnergy predict OUTPUT_DIR/my_model_training.onnx --mode training --batch 32

nnergy only reads the architecture (operators and shapes); the weights in the
file are never used, so an untrained model exports just as well.
"""

import os
import sys

import torch
import torch.nn as nn


class MyModel(nn.Module):
    """Replace this with your own model."""

    def __init__(self, classes=10):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 32, 3, padding=1, bias=False), nn.BatchNorm2d(32), nn.ReLU(),
            nn.Conv2d(32, 64, 3, stride=2, padding=1, bias=False), nn.BatchNorm2d(64), nn.ReLU(),
            nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.dropout = nn.Dropout(0.1)
        self.classifier = nn.Linear(64, classes)

    def forward(self, x):
        return self.classifier(self.dropout(self.features(x)))


def main():
    if len(sys.argv) != 2:
        sys.exit(f"usage: {sys.argv[0]} OUTPUT_DIR")
    out_dir = sys.argv[1]
    os.makedirs(out_dir, exist_ok=True)

    model = MyModel()
    # One example input. Its batch size does not matter: the dynamic axis below lets nnergy
    # set the batch with --batch. The other dimensions are fixed by this example; give other
    # varying dimensions (e.g. a sequence length) a name in dynamic_axes too and bind them
    # with --dim NAME=VALUE.
    x = torch.randn(1, 3, 32, 32)

    # Inference: eval mode. The exporter folds BatchNorm into the preceding Conv and drops
    # Dropout, as an inference runtime would.
    model.eval()
    torch.onnx.export(
        model, x, os.path.join(out_dir, "my_model.onnx"),
        input_names=["input"],
        output_names=["output"],
        dynamic_axes={"input": {0: "batch"}, "output": {0: "batch"}},
        opset_version=17)

    # Training: keep BatchNorm and Dropout as they run in training (BatchNorm with batch
    # statistics) and do not fold constants, so the graph is the one a training step runs.
    model.train()
    torch.onnx.export(
        model, x, os.path.join(out_dir, "my_model_training.onnx"),
        input_names=["input"],
        output_names=["output"],
        dynamic_axes={"input": {0: "batch"}, "output": {0: "batch"}},
        opset_version=17,
        training=torch.onnx.TrainingMode.TRAINING,
        do_constant_folding=False)
    print(f"wrote {out_dir}/my_model.onnx and {out_dir}/my_model_training.onnx")


if __name__ == "__main__":
    main()
