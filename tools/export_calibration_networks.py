#!/usr/bin/python3
"""Map the networks of the public calibration corpus to ONNX architectures.

Purpose
-------
nnergy is calibrated and evaluated against the published GPU measurements in
``measured_public.json`` (``/work/shared/calibration/``; see its README).  Every
record that gives a time, throughput, latency, power or energy of a *whole
network* must point to an architecture nnergy can import.  This script

1. reads the corpus and lists the distinct ``network`` strings of those
   records (archline fits, microbenchmark kernels, per-operator/per-layer rows,
   per-tensor power bounds and optimal-clock statements are skipped, and listed
   as skipped with the reason);
2. maps each string to an architecture: an existing zoo file
   (``data/zoo/<name>.onnx``) when the measured network has the same layers,
   otherwise a file it exports into ``data/calibration/networks/<name>.onnx``
   (or leaves it unmapped, with the reason);
3. counts the multiply-accumulates (MACs) per sample of every mapped
   architecture itself, from a forward run of the PyTorch model with
   ``export_user_models.count_macs`` (a ``TorchDispatchMode`` over the matrix
   operations), independently of nnergy;
4. writes ``data/calibration/networks.json`` with, per corpus string: the file
   (relative to ``data/``), the per-sample input shape, ``--dim`` bindings, the
   constructor, a note on why the mapping is faithful (or ``"unmapped"``), and
   the MAC counts;
5. with ``--nnergy PATH``, imports every file with that nnergy binary
   (``predict FILE --batch 16 --json`` plus the ``--dim`` bindings) and
   compares nnergy's ``totals.macs / 16`` with the script's count; more than
   1 % apart is an error.

Files are exported exactly as ``tools/export_zoo.py`` exports the zoo, with its
own functions (``export_model``, ``postprocess``, ``validate``): architecture
only (``export_params=False``, parameters are graph inputs without values),
eval mode with ``training=TrainingMode.PRESERVE`` so BatchNorm stays a
``BatchNormalization`` node and Dropout vanishes, dimension 0 of input and
output named ``batch`` (BERT-large: dimension 1 of ``input_ids`` named
``seq``, default 128 in ``nnergy.default_dims``), opset 17, nnergy metadata.
Only the file-size limit is raised (``export_zoo.MAX_FILE_BYTES``, 300 KB for
the zoo) to 512 KB, for densenet161/201, ResNet-200 and BERT-large.

Which architecture each corpus string denotes, and why, is written in
``MAPPINGS`` below and in ``data/calibration/networks/README.md``.

How to run
----------
::

    /usr/bin/python3 tools/export_calibration_networks.py \
        [--corpus /work/shared/calibration/measured_public.json] \
        [--data data] [--only name1,name2] [--no-export] \
        [--nnergy build/ci/apps/nnergy/nnergy]

``--only`` re-exports only the named files (names without ``.onnx``); the
others are not rewritten but still counted and checked.  ``--no-export``
writes only ``networks.json``.  Needs Debian 12's python3-torch 1.13,
python3-torchvision 0.14 and python3-onnx 1.12 (``/usr/bin/python3``);
downloads nothing; deterministic output.
"""

import argparse
import collections
import json
import os
import re
import subprocess
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import export_zoo  # noqa: E402  (tools/ is the script directory)
from export_zoo import (  # noqa: E402
    BertBase, IMAGE_SHAPE, SEQ_LEN, TORCHVISION_VERSION, ZooEntry, _format_kwargs,
    export_model, postprocess, validate)
from export_user_models import count_macs  # noqa: E402

DEFAULT_CORPUS = "/work/shared/calibration/measured_public.json"
NETWORKS_DIR = os.path.join("calibration", "networks")  # relative to data/
MAX_FILE_BYTES = 512 * 1024
MAC_TOLERANCE = 0.01
NNERGY_BATCH = 16

# ---------------------------------------------------------------------------
# Which corpus records are whole-network figures
# ---------------------------------------------------------------------------

NETWORK_QUANTITY = re.compile(r"time|throughput|latency|power|energy")


def skip_reason(record):
    """None for a whole-network time/throughput/latency/power/energy record, else why not."""
    network, quantity = record["network"], record["quantity"]
    if re.search(r"archline|kernel", network):
        return "archline fit or microbenchmark kernel, not a network"
    if quantity.startswith("layer_"):
        return "per-operator (single layer) row"
    if quantity.endswith("_clock"):
        return "an optimal core clock, not a time, power or energy"
    if quantity == "min_power_of_top10_energy_tensors":
        return "per-tensor power lower bound, not a whole-network figure"
    if not NETWORK_QUANTITY.search(quantity):
        return f"quantity {quantity} is not a time, throughput, latency, power or energy"
    return None


# ---------------------------------------------------------------------------
# Architectures that are not in torchvision or the zoo
# ---------------------------------------------------------------------------


class CrossChannelLRN(nn.Module):
    """Caffe's ACROSS_CHANNELS LRN: x / (k + alpha / size * sum of x^2 over size channels)^beta.

    The formula of torch.nn.LocalResponseNorm, written out: torch 1.13 exports
    F.local_response_norm with an ONNX If node whose output shape onnx 1.12
    cannot infer, so nnergy could not import it (neither the If of squeeze(1)
    here).  This exports as Mul, Unsqueeze, Pad, AveragePool (3-D), Gather,
    Mul, Add, Pow and Div.
    """

    def __init__(self, size=5, alpha=1e-4, beta=0.75, k=1.0):
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, x):
        squares = (x * x).unsqueeze(1)
        squares = F.pad(squares, (0, 0, 0, 0, self.size // 2, (self.size - 1) // 2))
        mean = F.avg_pool3d(squares, (self.size, 1, 1), stride=1)[:, 0]
        return x / (mean * self.alpha + self.k).pow(self.beta)


class CaffeAlexNet(nn.Module):
    """BVLC AlexNet (Caffe models/bvlc_alexnet), as loadcaffe builds it in Torch7.

    Grouped conv2/4/5 (group 2), LRN (local_size 5, alpha 1e-4, beta 0.75) after
    relu1 and relu2, before pool1/pool2, 3x3/2 max pooling with Caffe's ceil
    rounding (loadcaffe adds :ceil()), fc6 on 256x6x6.  With ceil rounding a
    224x224 input gives 54 -> 27 -> 27 -> 13 -> 13 -> 6, the same sizes as
    Caffe's 227x227 crop, which the pretrained fc6 (9216 inputs) requires.
    """

    def __init__(self, num_classes=1000):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 96, 11, stride=4), nn.ReLU(inplace=True),
            CrossChannelLRN(5, alpha=1e-4, beta=0.75, k=1.0),
            nn.MaxPool2d(3, 2, ceil_mode=True),
            nn.Conv2d(96, 256, 5, padding=2, groups=2), nn.ReLU(inplace=True),
            CrossChannelLRN(5, alpha=1e-4, beta=0.75, k=1.0),
            nn.MaxPool2d(3, 2, ceil_mode=True),
            nn.Conv2d(256, 384, 3, padding=1), nn.ReLU(inplace=True),
            nn.Conv2d(384, 384, 3, padding=1, groups=2), nn.ReLU(inplace=True),
            nn.Conv2d(384, 256, 3, padding=1, groups=2), nn.ReLU(inplace=True),
            nn.MaxPool2d(3, 2, ceil_mode=True))
        self.classifier = nn.Sequential(
            nn.Linear(256 * 6 * 6, 4096), nn.ReLU(inplace=True), nn.Dropout(0.5),
            nn.Linear(4096, 4096), nn.ReLU(inplace=True), nn.Dropout(0.5),
            nn.Linear(4096, num_classes))

    def forward(self, x):
        return self.classifier(torch.flatten(self.features(x), 1))


class TorchInceptionModule(nn.Module):
    """One Inception module of soumith/inception.torch: 1x1 | 1x1-3x3 | 1x1-5x5 | pool-1x1."""

    def __init__(self, cin, c1, c3r, c3, c5r, c5, pool_proj):
        super().__init__()
        relu = lambda: nn.ReLU(inplace=True)  # noqa: E731
        self.b1 = nn.Sequential(nn.Conv2d(cin, c1, 1), relu())
        self.b3 = nn.Sequential(nn.Conv2d(cin, c3r, 1), relu(),
                                nn.Conv2d(c3r, c3, 3, padding=1), relu())
        self.b5 = nn.Sequential(nn.Conv2d(cin, c5r, 1), relu(),
                                nn.Conv2d(c5r, c5, 5, padding=2), relu())
        self.bp = nn.Sequential(nn.MaxPool2d(3, 1, padding=1),
                                nn.Conv2d(cin, pool_proj, 1), relu())

    def forward(self, x):
        return torch.cat([self.b1(x), self.b3(x), self.b5(x), self.bp(x)], 1)


class TorchInceptionV1(nn.Module):
    """GoogLeNet of soumith/inception.torch googlenet.lua (Google's released inception5h graph).

    No BatchNorm, no LRN (googlenet.lua constructs its two
    SpatialCrossResponseNormalization modules but never adds them), real 5x5
    convolutions, mixed4a's 3x3 branch has 204 (not 208) filters (so 4a outputs
    508 channels), Torch's floor-rounded pooling (224 -> 112 -> 56 -> 28 -> 13
    -> 7), no auxiliary heads, a 1024 -> 1008 classifier narrowed to 1000
    classes, LogSoftMax.
    """

    CONFIG = [  # name, cin, 1x1, 3x3 reduce, 3x3, 5x5 reduce, 5x5, pool proj
        ("3a", 192, 64, 96, 128, 16, 32, 32),
        ("3b", 256, 128, 128, 192, 32, 96, 64),
        ("pool",),
        ("4a", 480, 192, 96, 204, 16, 48, 64),
        ("4b", 508, 160, 112, 224, 24, 64, 64),
        ("4c", 512, 128, 128, 256, 24, 64, 64),
        ("4d", 512, 112, 144, 288, 32, 64, 64),
        ("4e", 528, 256, 160, 320, 32, 128, 128),
        ("pool_pad",),
        ("5a", 832, 256, 160, 320, 48, 128, 128),
        ("5b", 832, 384, 192, 384, 48, 128, 128),
    ]

    def __init__(self):
        super().__init__()
        layers = [nn.Conv2d(3, 64, 7, 2, 3), nn.ReLU(inplace=True), nn.MaxPool2d(3, 2, 1),
                  nn.Conv2d(64, 64, 1), nn.ReLU(inplace=True),
                  nn.Conv2d(64, 192, 3, 1, 1), nn.ReLU(inplace=True), nn.MaxPool2d(3, 2, 1)]
        for cfg in self.CONFIG:
            if cfg[0] == "pool":
                layers.append(nn.MaxPool2d(3, 2))
            elif cfg[0] == "pool_pad":
                layers.append(nn.MaxPool2d(3, 2, 1))
            else:
                layers.append(TorchInceptionModule(*cfg[1:]))
        layers.append(nn.AvgPool2d(7, 1))
        self.features = nn.Sequential(*layers)
        self.classifier = nn.Linear(1024, 1008)

    def forward(self, x):
        logits = self.classifier(torch.flatten(self.features(x), 1))[:, 1:1001]
        return torch.log_softmax(logits, dim=1)


class PreActBottleneck(nn.Module):
    """Bottleneck of fb.resnet.torch preresnet.lua: [BN-ReLU] 1x1, BN-ReLU 3x3/s, BN-ReLU 1x1."""

    def __init__(self, cin, n, stride, first):
        super().__init__()
        pre = [] if first else [nn.BatchNorm2d(cin), nn.ReLU(inplace=True)]
        self.residual = nn.Sequential(
            *pre,
            nn.Conv2d(cin, n, 1, bias=False), nn.BatchNorm2d(n), nn.ReLU(inplace=True),
            nn.Conv2d(n, n, 3, stride, 1, bias=False), nn.BatchNorm2d(n), nn.ReLU(inplace=True),
            nn.Conv2d(n, 4 * n, 1, bias=False))
        # shortcut type B: a projection only where the channel count changes
        self.shortcut = (nn.Sequential(nn.Conv2d(cin, 4 * n, 1, stride, bias=False),
                                       nn.BatchNorm2d(4 * n))
                         if cin != 4 * n else nn.Identity())

    def forward(self, x):
        return self.residual(x) + self.shortcut(x)


class PreActResNet200(nn.Module):
    """ImageNet ResNet-200 of fb.resnet.torch models/preresnet.lua (shortcut type B).

    Blocks {3, 24, 36, 3}; stride in the 3x3 convolution; every block of the
    first stage is of type 'first' (no leading BN-ReLU); final BN-ReLU,
    7x7 average pool, Linear(2048, 1000); convolutions without bias (cuDNN >= 4).
    """

    def __init__(self, blocks=(3, 24, 36, 3)):
        super().__init__()
        layers = [nn.Conv2d(3, 64, 7, 2, 3, bias=False), nn.BatchNorm2d(64), nn.ReLU(inplace=True),
                  nn.MaxPool2d(3, 2, 1)]
        cin = 64
        for stage, (n, count) in enumerate(zip((64, 128, 256, 512), blocks)):
            for i in range(count):
                stride = 2 if (stage > 0 and i == 0) else 1
                layers.append(PreActBottleneck(cin, n, stride, first=(stage == 0)))
                cin = 4 * n
        layers += [nn.BatchNorm2d(cin), nn.ReLU(inplace=True), nn.AvgPool2d(7, 1)]
        self.features = nn.Sequential(*layers)
        self.fc = nn.Linear(cin, 1000)

    def forward(self, x):
        return self.fc(torch.flatten(self.features(x), 1))


def resnet_stride_in_1x1(ctor):
    """A torchvision ResNet with every bottleneck's stride moved from the 3x3 to the first 1x1.

    This is the layout of the original paper (He et al. 2015), called ResNet v1 by
    NVIDIA; torchvision (and fb.resnet.torch) put the stride in the 3x3 ("v1.5").
    """
    model = getattr(torchvision.models, ctor)(weights=None)
    for module in model.modules():
        if isinstance(module, torchvision.models.resnet.Bottleneck) and module.conv2.stride != (1, 1):
            module.conv1.stride, module.conv2.stride = module.conv2.stride, (1, 1)
    return model


def _relu_conv(cin, cout, k, stride=1, padding=0):
    return [nn.Conv2d(cin, cout, k, stride, padding), nn.ReLU(inplace=True)]


class PaleoNet(nn.Module):
    """A plain chain of Paleo JSON layers (TF-slim style): convs, pools, fc-as-conv, softmax.

    TF 'SAME' padding of the stride-1 odd-kernel convolutions is the symmetric
    padding k // 2; 'VALID' is no padding; pooling is floor-rounded.
    """

    def __init__(self, layers):
        super().__init__()
        self.net = nn.Sequential(*layers)

    def forward(self, x):
        return torch.softmax(torch.flatten(self.net(x), 1), dim=1)


def paleo_alexnet_v2():
    """TalwalkarLab/paleo nets/alex_v2.json: AlexNet v2 ('One weird trick', TF-slim alexnet_v2)."""
    return PaleoNet(
        _relu_conv(3, 64, 11, 4) + [nn.MaxPool2d(3, 2)]
        + _relu_conv(64, 192, 5, padding=2) + [nn.MaxPool2d(3, 2)]
        + _relu_conv(192, 384, 3, padding=1) + _relu_conv(384, 384, 3, padding=1)
        + _relu_conv(384, 256, 3, padding=1) + [nn.MaxPool2d(3, 2)]
        + _relu_conv(256, 4096, 5) + [nn.Dropout(0.5)]
        + _relu_conv(4096, 4096, 1) + [nn.Dropout(0.5)]
        + [nn.Conv2d(4096, 1000, 1)])


def paleo_nin():
    """TalwalkarLab/paleo nets/nin.json: Network in Network (ImageNet, Caffe-zoo NIN of Lin et al.)."""
    return PaleoNet(
        _relu_conv(3, 96, 11, 4) + _relu_conv(96, 96, 1) + _relu_conv(96, 96, 1)
        + [nn.MaxPool2d(3, 2)]
        + _relu_conv(96, 256, 5, padding=2) + _relu_conv(256, 256, 1) + _relu_conv(256, 256, 1)
        + [nn.MaxPool2d(3, 2)]
        + _relu_conv(256, 384, 3, padding=1) + _relu_conv(384, 384, 1) + _relu_conv(384, 384, 1)
        + [nn.MaxPool2d(3, 2), nn.Dropout(0.5)]
        + _relu_conv(384, 1024, 3, padding=1) + _relu_conv(1024, 1024, 1)
        + _relu_conv(1024, 1000, 1) + [nn.AvgPool2d(5, 1)])


def paleo_overfeat():
    """TalwalkarLab/paleo nets/overfeat.json: OverFeat (fast), 231x231 input."""
    return PaleoNet(
        _relu_conv(3, 64, 11, 4) + [nn.MaxPool2d(2, 2)]
        + _relu_conv(64, 256, 5) + [nn.MaxPool2d(2, 2)]
        + _relu_conv(256, 512, 3, padding=1) + _relu_conv(512, 1024, 3, padding=1)
        + _relu_conv(1024, 1024, 3, padding=1) + [nn.MaxPool2d(2, 2)]
        + _relu_conv(1024, 3072, 6) + [nn.Dropout(0.5)]
        + _relu_conv(3072, 4096, 1) + [nn.Dropout(0.5)]
        + [nn.Conv2d(4096, 1000, 1)])


def paleo_cifar10_6conv():
    """enyac-group/NeuralPower neuralpower_paleo/nets/cifar10_6conv.json, 32x32 input."""
    return PaleoNet(
        _relu_conv(3, 128, 3, padding=1) + _relu_conv(128, 128, 3, padding=1)
        + [nn.MaxPool2d(2, 2)]
        + _relu_conv(128, 256, 3, padding=1) + _relu_conv(256, 256, 3, padding=1)
        + [nn.MaxPool2d(2, 2)]
        + _relu_conv(256, 512, 3, padding=1) + _relu_conv(512, 512, 3, padding=1)
        + _relu_conv(512, 1024, 8) + [nn.Dropout(0.5)]
        + _relu_conv(1024, 1024, 1) + [nn.Dropout(0.5)]
        + [nn.Conv2d(1024, 10, 1)])


class BertLarge(BertBase):
    """BERT-large encoder (24 layers, H=1024, 16 heads, FFN 4096) with pooler.

    export_zoo's BertBase with the BERT-large hyperparameters: no attention
    mask, all-zero token-type ids, pooled first-token output [batch, 1024].
    """

    def __init__(self):
        super().__init__(hidden=1024, layers=24, heads=16, ffn=4096)


# ---------------------------------------------------------------------------
# Architectures: name -> how to build it
# ---------------------------------------------------------------------------

class Arch:
    """One architecture: a zoo file or a file this script exports."""

    def __init__(self, name, build, constructor, description, input_shape=None, zoo=False,
                 token_model=False):
        self.name = name
        self.build = build
        self.constructor = constructor
        self.description = description
        self.input_shape = input_shape or list(IMAGE_SHAPE)
        self.zoo = zoo
        self.token_model = token_model

    @property
    def file(self):
        """Path relative to data/."""
        return (f"zoo/{self.name}.onnx" if self.zoo
                else f"{NETWORKS_DIR}/{self.name}.onnx")

    def zoo_entry(self):
        if self.token_model:
            return ZooEntry(
                self.name, self.build,
                example=lambda: torch.randint(0, 30522, (1, SEQ_LEN), dtype=torch.long),
                input_name="input_ids", opset=17, description=self.description,
                source=self.constructor, input_axes={0: "batch", 1: "seq"},
                output_axes={0: "batch"}, default_dims={"seq": SEQ_LEN})
        shape = self.input_shape
        return ZooEntry(self.name, self.build, example=lambda: torch.randn(1, *shape),
                        input_name="input", opset=17, description=self.description,
                        source=self.constructor)


def _tv(ctor, **kwargs):
    def build():
        return getattr(torchvision.models, ctor)(weights=None, **kwargs)
    return build


def architectures():
    archs = {}

    def add(arch):
        archs[arch.name] = arch

    # zoo files (built here only to count their MACs)
    zoo_kwargs = {"googlenet": {"aux_logits": False, "init_weights": False}}
    for name in ("vgg16", "vgg19", "resnet18", "resnet34", "resnet50", "resnet101", "resnet152",
                 "mobilenet_v2", "efficientnet_b0", "densenet121", "squeezenet1_1",
                 "shufflenet_v2_x1_0"):
        kwargs = zoo_kwargs.get(name, {})
        add(Arch(name, _tv(name, **kwargs),
                 f"torchvision {TORCHVISION_VERSION} {name}({_format_kwargs(kwargs)})",
                 f"{name} (torchvision)", zoo=True))
    add(Arch("bert_base", BertBase, "tools/export_zoo.py BertBase (torch.nn)",
             "BERT-base encoder with pooler", zoo=True, token_model=True))

    # torchvision models that are not in the zoo
    for name in ("resnext50_32x4d", "resnext101_32x8d", "wide_resnet50_2", "wide_resnet101_2",
                 "densenet161", "densenet169", "densenet201",
                 "vgg11", "vgg11_bn", "vgg13", "vgg13_bn", "vgg16_bn", "vgg19_bn",
                 "squeezenet1_0", "mnasnet0_5", "mnasnet0_75", "mnasnet1_0", "mnasnet1_3",
                 "shufflenet_v2_x0_5", "shufflenet_v2_x1_5", "shufflenet_v2_x2_0"):
        add(Arch(name, _tv(name),
                 f"torchvision {TORCHVISION_VERSION} {name}(weights=None)",
                 f"{name} image classifier (torchvision)"))

    # hand-written architectures
    add(Arch("caffe_bvlc_alexnet", CaffeAlexNet,
             "tools/export_calibration_networks.py CaffeAlexNet (BVLC Caffe bvlc_alexnet "
             "deploy.prototxt as loaded by loadcaffe)",
             "BVLC Caffe AlexNet: grouped convolutions, LRN, ceil-rounded pooling"))
    add(Arch("inception_v1_torch", TorchInceptionV1,
             "tools/export_calibration_networks.py TorchInceptionV1 (soumith/inception.torch "
             "googlenet.lua)",
             "GoogLeNet / Inception-V1 of soumith/inception.torch (no BN, no LRN, 5x5 branches)"))
    add(Arch("preact_resnet200", PreActResNet200,
             "tools/export_calibration_networks.py PreActResNet200 (fb.resnet.torch "
             "models/preresnet.lua, depth 200)",
             "Pre-activation ResNet-200 of fb.resnet.torch"))
    for depth in (50, 101, 152):
        ctor = f"resnet{depth}"
        add(Arch(f"resnet{depth}_stride_1x1", lambda c=ctor: resnet_stride_in_1x1(c),
                 f"torchvision {TORCHVISION_VERSION} {ctor}(weights=None) with every bottleneck "
                 f"stride moved from conv2 (3x3) to conv1 (1x1)",
                 f"ResNet-{depth} with the stride in the first 1x1 conv of a bottleneck "
                 f"(original paper, 'v1')"))
    add(Arch("paleo_alexnet_v2", paleo_alexnet_v2,
             "tools/export_calibration_networks.py paleo_alexnet_v2 (TalwalkarLab/paleo "
             "nets/alex_v2.json)",
             "AlexNet v2 ('One weird trick', TF-slim alexnet_v2) as specified by Paleo"))
    add(Arch("paleo_nin", paleo_nin,
             "tools/export_calibration_networks.py paleo_nin (TalwalkarLab/paleo nets/nin.json)",
             "Network in Network (ImageNet) as specified by Paleo"))
    add(Arch("paleo_overfeat", paleo_overfeat,
             "tools/export_calibration_networks.py paleo_overfeat (TalwalkarLab/paleo "
             "nets/overfeat.json)",
             "OverFeat (fast) as specified by Paleo, 231x231 input", input_shape=[3, 231, 231]))
    add(Arch("cifar10_6conv", paleo_cifar10_6conv,
             "tools/export_calibration_networks.py paleo_cifar10_6conv (enyac-group/NeuralPower "
             "neuralpower_paleo/nets/cifar10_6conv.json)",
             "CIFAR10-6conv of NeuralPower's Paleo specification, 32x32 input",
             input_shape=[3, 32, 32]))
    add(Arch("bert_large", BertLarge,
             "tools/export_calibration_networks.py BertLarge (export_zoo.BertBase with 24 layers, "
             "hidden 1024, 16 heads, FFN 4096)",
             "BERT-large encoder with pooler, symbolic sequence length seq (default 128) "
             "(torch.nn)", token_model=True))
    return archs


# ---------------------------------------------------------------------------
# Corpus network string -> architecture, with the reasoning
# ---------------------------------------------------------------------------

RYUJAEHUN = ("ryujaehun/pytorch-gpu-benchmark times the torchvision model of this name "
             "(weights irrelevant), 224x224 input; the file is that constructor's export.")
JCJ = ("jcjohnson/cnn-benchmarks, Torch7, 16x3x224x224, model:training() (BatchNorm uses batch "
       "statistics and Dropout is active there; the file has eval-mode BatchNorm and no Dropout, "
       "which changes no MAC). ")
FB_V15 = (JCJ + "fb.resnet.torch models/resnet.lua (facebookarchive/fb.resnet.torch @2fedffc, "
          "the code its pretrained .t7 models come from) puts the bottleneck stride in the 3x3 "
          "convolution (s:add(Convolution(n,n,3,3,stride,stride,1,1))), not in the 1x1: the layer "
          "shapes are torchvision's (torchvision's ResNet is a port of fb.resnet.torch), so the "
          "zoo file is faithful and the corpus label 'v1' (stride in the 1x1) does not match the "
          "code. Shortcut type B (projection only where channels change) = torchvision's "
          "downsample. 'alternative' is the paper layout with the stride in the 1x1, for "
          "comparison only.")
NEURALPOWER = ("NeuralPower (seed 004) ran Paleo on its test networks, and its own repository "
               "(enyac-group/NeuralPower, neuralpower_paleo/) is Paleo with its network JSONs; "
               "the file follows the Paleo JSON layer by layer. Batch not stated in the paper; the "
               "JSON's batch is {batch} (Table 7's EPI implies the same). TensorFlow 1.0 "
               "inference. ")

MAPPINGS = {
    # --- NeuralPower (seed 004), TensorFlow 1.0, GTX Titan X ---------------------------------
    "AlexNet": ("paleo_alexnet_v2", NEURALPOWER.format(batch=128) +
                "The paper cites 'Krizhevsky (2014), One weird trick', i.e. AlexNet v2 (64/192/384/"
                "384/256 channels, VALID 11x11/4 conv1, fc6 as a 5x5 conv on 256x5x5), which "
                "differs from torchvision's alexnet (conv1 padding 2, 384->256->256, 6x6 pool): "
                "exported from Paleo's alex_v2.json."),
    "VGG-16": ("vgg16", NEURALPOWER.format(batch=64) +
               "Paleo's vgg16.json has torchvision vgg16's layer shapes; its fc6/fc7/fc8 are "
               "convolutions (7x7 on 512x7x7, then 1x1) where torchvision has Linear layers: same "
               "MACs and weights, a different operator type (the paper treats fc and conv-as-fc "
               "alike)."),
    "NIN": ("paleo_nin", NEURALPOWER.format(batch=128) +
            "Paleo's nin.json (from mavenlin's Caffe NIN-ImageNet train_val.prototxt), 224x224: "
            "four mlpconv blocks, conv4 3x3 384->1024 (the paper's dominant layer), 5x5 global "
            "average pool."),
    "Overfeat": ("paleo_overfeat", NEURALPOWER.format(batch=128) +
                 "Paleo's overfeat.json (TF-slim overfeat, the 'fast' model), 231x231 input, fc6 as "
                 "a 6x6 conv to 3072 channels."),
    "CIFAR10-6conv": ("cifar10_6conv", NEURALPOWER.format(batch=128) +
                      "NeuralPower's own cifar10_6conv.json: 2x128C3-MP2-2x256C3-MP2-2x512C3-"
                      "1024(8x8 conv)-1024-10, 32x32, no BatchNorm, no third pooling (unlike the "
                      "BinaryConnect paper's network it is named after)."),
    # --- bert -----------------------------------------------------------------------------
    "bert-base (L=12, H=768), google-research/bert": (
        "bert_base",
        "google-research/bert BERT-base, seq 128, batch 32 (Smaragdine, TensorFlow 2.8): the zoo's "
        "BERT-base encoder (12x768, 12 heads, FFN 3072). Task heads are not modelled: the zoo "
        "file ends in the pooler; pre-training's MLM head (768x30522 per predicted token) and "
        "the classifier are not in it. The records are coarse energies over 500 steps."),
    "bert-large-uncased (NVIDIA DLE)": (
        "bert_large",
        "NVIDIA DeepLearningExamples BERT-large (24 layers, hidden 1024, 16 heads, FFN 4096), "
        "seq 128 (pre-training phase 1) and 384 (SQuAD): export_zoo's BertBase module with the "
        "large hyperparameters. Encoder + pooler only: the MLM/NSP heads of pre-training and the "
        "QA head of SQuAD are not modelled (the MLM head would add up to ~10 % of the MACs if "
        "computed for all tokens), nor DLE's fused kernels and optimizer step."),
    # --- NVIDIA DLE image models -------------------------------------------------------------
    "resnet50 (v1.5, NVIDIA DLE)": (
        "resnet50",
        "NVIDIA's ResNet-50 v1.5 has torchvision resnet50's layer shapes (stride in the 3x3, "
        "as the record notes say). DLE adds AMP/channels-last, DALI and an optimizer step."),
    "efficientnet_b0 (NVIDIA DLE implementation)": (
        "efficientnet_b0",
        "NVIDIA DLE's EfficientNet-B0 follows the original (Tan & Le) B0: width/depth 1.0, "
        "224x224, stem 32, head 1280, SE ratio 0.25 of the block input, SiLU; torchvision "
        "efficientnet_b0 has the same layer shapes. Not checked against DLE's code here."),
    # --- jcjohnson/cnn-benchmarks (Torch7) ----------------------------------------------------
    "alexnet (BVLC Caffe AlexNet, grouped conv)": (
        "caffe_bvlc_alexnet",
        JCJ + "cnn-benchmarks converts BVLC bvlc_alexnet with loadcaffe (convert_model.lua): "
        "96/256/384/384/256 channels, group 2 in conv2/4/5, LRN after relu1/relu2, ceil-rounded "
        "3x3/2 pooling (loadcaffe's :ceil(); the pretrained fc6 on 256x6x6 needs it at 224x224). "
        "torchvision's alexnet (One weird trick: 64/192/384/256/256, no groups, no LRN) is a "
        "different network: exported here."),
    "inception_v1 / googlenet (soumith/inception.torch)": (
        "inception_v1_torch",
        JCJ + "soumith/inception.torch googlenet.lua (@18cd122): Google's inception5h GoogLeNet, "
        "no BatchNorm, real 5x5 branches, mixed4a 3x3 with 204 filters, no LRN (constructed but "
        "never added), Torch floor pooling, 1008-way classifier. torchvision's googlenet differs "
        "(BatchNorm after every conv, 3x3 kernels in the '5x5' branches, ceil pooling): exported "
        "here."),
    "vgg16 (model D)": ("vgg16", JCJ + "VGG_ILSVRC_16_layers (model D) via loadcaffe: "
                        "torchvision vgg16's layers (13 convs, 3 Linear on 25088/4096/4096)."),
    "vgg19 (model E)": ("vgg19", JCJ + "VGG_ILSVRC_19_layers (model E) via loadcaffe: "
                        "torchvision vgg19's layers."),
    "resnet18 (fb.resnet.torch)": (
        "resnet18", JCJ + "fb.resnet.torch resnet.lua basic blocks (stride in the first 3x3, "
        "shortcut type B) have torchvision resnet18's layer shapes."),
    "resnet34 (fb.resnet.torch)": (
        "resnet34", JCJ + "fb.resnet.torch resnet.lua basic blocks (stride in the first 3x3, "
        "shortcut type B) have torchvision resnet34's layer shapes."),
    "resnet50 (fb.resnet.torch, v1)": ("resnet50", FB_V15, "resnet50_stride_1x1"),
    "resnet101 (fb.resnet.torch, v1)": ("resnet101", FB_V15, "resnet101_stride_1x1"),
    "resnet152 (fb.resnet.torch, v1)": ("resnet152", FB_V15, "resnet152_stride_1x1"),
    "resnet200 (fb.resnet.torch, pre-activation)": (
        "preact_resnet200",
        JCJ + "fb.resnet.torch models/preresnet.lua, depth 200: bottleneck blocks {3, 24, 36, 3}, "
        "full pre-activation (BN-ReLU before each conv), stride in the 3x3, shortcut type B, "
        "final BN-ReLU; exported here (torchvision has no ResNet-200)."),
    # --- aggregates ---------------------------------------------------------------------------
    "sum over the 18 validation model-input sets": (
        None,
        "a sum over 18 torchvision model-input sets of the A30 thesis (seed 000) whose list and "
        "input sizes appear only in its figures (named examples: EfficientNetB0 32x3x224x224, "
        "ResNet18 32x3x32x32, ResNet34 32x3x56x56, ConvNeXt Base); the values are approximate "
        "prose ('around 300 ms', 'close to 2000 ms'). No single architecture."),
}

# Plain torchvision names of ryujaehun/pytorch-gpu-benchmark map to the model of that name.
TORCHVISION_NAMES = ("densenet121 densenet161 densenet169 densenet201 mnasnet0_5 mnasnet0_75 "
                     "mnasnet1_0 mnasnet1_3 mobilenet_v2 resnet18 resnet34 resnet50 resnet101 "
                     "resnet152 resnext50_32x4d resnext101_32x8d shufflenet_v2_x0_5 "
                     "shufflenet_v2_x1_0 shufflenet_v2_x1_5 shufflenet_v2_x2_0 squeezenet1_0 "
                     "squeezenet1_1 vgg11 vgg11_bn vgg13 vgg13_bn vgg16 vgg16_bn vgg19 vgg19_bn "
                     "wide_resnet50_2 wide_resnet101_2").split()
for _name in TORCHVISION_NAMES:
    MAPPINGS[_name] = (_name, RYUJAEHUN)


# ---------------------------------------------------------------------------
# MACs: script count and nnergy count
# ---------------------------------------------------------------------------

def seq_bindings(input_shapes):
    """Sequence lengths named by the records' input_shape strings ('seq_len 384')."""
    seqs = set()
    for shape in input_shapes:
        match = re.fullmatch(r"seq_len (\d+)", shape or "")
        if match:
            seqs.add(int(match.group(1)))
    return sorted(seqs) or [SEQ_LEN]


def script_macs(arch, seq=None):
    torch.manual_seed(0)
    model = arch.build()
    model.eval()
    if arch.token_model:
        x = torch.randint(0, 30522, (1, seq), dtype=torch.long)
    else:
        x = torch.randn(1, *arch.input_shape)
    macs, _, _ = count_macs(model, x)
    return int(macs)


def nnergy_macs(nnergy, path, dims):
    cmd = [nnergy, "predict", path, "--batch", str(NNERGY_BATCH), "--json"]
    for key, value in dims.items():
        cmd += ["--dim", f"{key}={value}"]
    result = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed: {(result.stderr or result.stdout).strip()}")
    report = json.loads(result.stdout)
    return report["totals"]["mac_count"] / NNERGY_BATCH


# ---------------------------------------------------------------------------
# Main
# ---------------------------------------------------------------------------

def corpus_networks(corpus):
    """(network -> list of whole-network records, skipped network -> reason)."""
    wanted = collections.OrderedDict()
    skipped = {}
    for record in corpus:
        reason = skip_reason(record)
        if reason is None:
            wanted.setdefault(record["network"], []).append(record)
        else:
            skipped.setdefault(record["network"], set()).add(reason)
    skipped = {k: "; ".join(sorted(v)) for k, v in skipped.items() if k not in wanted}
    return wanted, skipped


def export_arch(arch, data_dir):
    path = os.path.join(data_dir, arch.file)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    entry = arch.zoo_entry()
    try:
        torch_shape = export_model(entry, path)
        model, notes = postprocess(entry, path, torch_shape)
        ops, size = validate(entry, model, path, torch_shape)
    except Exception:
        if os.path.exists(path):
            os.remove(path)
        raise
    top = ", ".join(f"{op} {count}" for op, count in ops.most_common(5))
    print(f"exported {arch.file:48s} {len(model.graph.node):5d} nodes {size / 1024:7.1f} KB  "
          f"[{top}]", flush=True)
    for note in notes:
        print(f"{'':9s}note: {note}", flush=True)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", default=DEFAULT_CORPUS)
    parser.add_argument("--data", default="data", help="the repository's data/ directory")
    parser.add_argument("--only", default="", help="comma-separated file names to re-export")
    parser.add_argument("--no-export", action="store_true", help="write networks.json only")
    parser.add_argument("--nnergy", default="",
                        help="built nnergy binary: import every file and compare MACs (1 %%)")
    args = parser.parse_args(argv)

    export_zoo.MAX_FILE_BYTES = MAX_FILE_BYTES
    with open(args.corpus) as f:
        corpus = json.load(f)
    wanted, skipped = corpus_networks(corpus)
    archs = architectures()

    unknown = [n for n in wanted if n not in MAPPINGS]
    if unknown:
        print(f"corpus networks without a mapping decision: {unknown}", file=sys.stderr)
        return 1

    # every non-zoo architecture a mapping uses (including alternatives) is exported
    used = []
    for network in wanted:
        mapping = MAPPINGS[network]
        for name in (mapping[0],) + tuple(mapping[2:]):
            if name and name not in used:
                used.append(name)
    only = {n.strip() for n in args.only.split(",") if n.strip()}
    if only - set(used):
        parser.error(f"unknown file name(s): {sorted(only - set(used))}")
    if not args.no_export:
        for name in used:
            arch = archs[name]
            if arch.zoo or (only and name not in only):
                continue
            export_arch(arch, args.data)

    failures = []
    counted = {}  # (arch, seq) -> (script, nnergy)

    def count(arch, seq):
        key = (arch.name, seq)
        if key not in counted:
            macs = script_macs(arch, seq)
            nn_macs = None
            if args.nnergy:
                dims = {"seq": seq} if arch.token_model else {}
                try:
                    nn_macs = nnergy_macs(args.nnergy, os.path.join(args.data, arch.file), dims)
                except Exception as exc:  # report, then fail at the end
                    failures.append(f"{arch.file}: {exc}")
            counted[key] = (macs, nn_macs)
            if nn_macs is not None:
                rel = nn_macs / macs - 1.0
                flag = "" if abs(rel) <= MAC_TOLERANCE else "  MISMATCH"
                if flag:
                    failures.append(f"{arch.file} seq={seq}: nnergy {nn_macs:.6g} MACs per sample, "
                                    f"script {macs}")
                print(f"macs {arch.file:48s} {'' if seq is None else f'seq={seq} '}"
                      f"script {macs / 1e9:9.4f} G  nnergy {nn_macs / 1e9:9.4f} G  "
                      f"{100 * rel:+.3f} %{flag}", flush=True)
        return counted[key]

    def runs_for(arch, records):
        shapes = sorted({str(r["input_shape"]) for r in records})
        runs = []
        seqs = seq_bindings(shapes) if arch.token_model else [None]
        for seq in seqs:
            macs, nn_macs = count(arch, seq)
            run = {"records_input_shape": ([s for s in shapes if s == f"seq_len {seq}"]
                                           if arch.token_model else shapes),
                   "dims": {"seq": seq} if arch.token_model else {},
                   "dim_args": [f"--dim", f"seq={seq}"] if arch.token_model else [],
                   "macs_per_sample": macs}
            if nn_macs is not None:
                run["nnergy_macs_per_sample"] = round(nn_macs)
                run["nnergy_vs_script"] = round(nn_macs / macs - 1.0, 6)
            runs.append(run)
        return runs

    networks = collections.OrderedDict()
    for network in sorted(wanted, key=str.lower):
        records = wanted[network]
        mapping = MAPPINGS[network]
        name, note = mapping[0], mapping[1]
        info = collections.OrderedDict()
        info["records"] = len(records)
        info["quantities"] = sorted({r["quantity"] for r in records})
        info["record_input_shapes"] = sorted({str(r["input_shape"]) for r in records})
        if name is None:
            info["unmapped"] = note
            networks[network] = info
            continue
        arch = archs[name]
        info["file"] = arch.file
        info["input"] = ({"input_ids": "int64 [seq]"} if arch.token_model
                         else {"input": "float32 " + str(arch.input_shape)})
        info["input_shape_per_sample"] = ["seq"] if arch.token_model else arch.input_shape
        info["constructor"] = arch.constructor
        info["note"] = note
        info["runs"] = runs_for(arch, records)
        if len(mapping) > 2:
            alt = archs[mapping[2]]
            info["alternative"] = {"file": alt.file, "constructor": alt.constructor,
                                   "macs_per_sample": count(alt, None)[0],
                                   "note": "stride in the first 1x1 conv of each downsampling "
                                           "bottleneck (original paper); not what the measured "
                                           "code runs, see note"}
            if counted[(alt.name, None)][1] is not None:
                info["alternative"]["nnergy_macs_per_sample"] = round(counted[(alt.name, None)][1])
        networks[network] = info

    out = collections.OrderedDict()
    out["description"] = ("Corpus network string -> ONNX architecture for the whole-network records "
                          "of measured_public.json; written by tools/export_calibration_networks.py "
                          "(see data/calibration/networks/README.md). Files are relative to data/. "
                          "macs_per_sample is counted by the script from a PyTorch forward run "
                          "(TorchDispatchMode over matrix ops); nnergy_macs_per_sample is nnergy's "
                          f"totals.macs / {NNERGY_BATCH} at --batch {NNERGY_BATCH}.")
    out["corpus"] = os.path.basename(args.corpus)
    out["corpus_records"] = len(corpus)
    out["network_level_records"] = sum(len(v) for v in wanted.values())
    out["selection"] = ("records whose quantity names a time, throughput, latency, power or energy, "
                        "except archline/kernel rows, per-layer rows (layer_*), per-tensor power "
                        "bounds and optimal-clock statements")
    out["mapped"] = sum(1 for v in networks.values() if "file" in v)
    out["unmapped"] = sum(1 for v in networks.values() if "unmapped" in v)
    out["networks"] = networks
    out["skipped_networks"] = collections.OrderedDict(sorted(skipped.items()))
    path = os.path.join(args.data, "calibration", "networks.json")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")
    print(f"wrote {path}: {out['mapped']} mapped, {out['unmapped']} unmapped network strings, "
          f"{out['network_level_records']} records", flush=True)

    if failures:
        for failure in failures:
            print(f"FAILED {failure}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
