#!/usr/bin/python3
"""Export a corpus of user-style ONNX files with independently counted MACs.

Purpose
-------
nnergy must load any network a user exports with a plain
``torch.onnx.export(model, x, "model.onnx")`` and count its work right.  This
script writes such exports into ``tests/fixtures/user_exports/`` together with
``manifest.json``, which records for every file how it was exported and, for
two batch sizes, the number of multiply-accumulates (MACs) counted by PyTorch
itself, not by nnergy.  ``tests/graph/user_exports_test.cc`` imports every
file with nnergy and compares.

What is exported
----------------
torchvision 0.14 classifiers (resnet18 at opsets 13/14/17 and with a dynamic
batch, mobilenet_v3_small at opsets 13/17, shufflenet_v2_x0_5, convnext_tiny,
vit_b_32, swin_t), fcn_resnet50 (segmentation), r3d_18 (video, Conv3d), and
hand-written ``torch.nn`` models: a TransformerEncoder, a bare
MultiheadAttention, LSTMs, a GRU, einsum and chunk attentions, a GPT-style
causal block, a block with hand-written LayerNorm and erf-GELU, a small UNet
and a BatchNorm network exported in eval mode (BatchNorm folded into Conv, the
default) and in training mode.  Every model is built with ``weights=None`` or
``torch.manual_seed(0)``; nothing is downloaded.

Exports use ``torch.onnx.export``'s defaults (``export_params=True``, constant
folding on, opset 14 for torch 1.13) except where the manifest says otherwise
(opset, ``dynamic_axes``, training mode).  Before export every floating-point
parameter and buffer gets a small random perturbation, as trained weights
would: torch 1.13 otherwise merges parameters with identical values (fresh
LayerNorm weights of all ones) into one initializer, which no user with a
trained model sees.

Architecture-only files
-----------------------
After export, every floating-point initializer with more than 64 elements
loses its data and is marked external (``data_location = EXTERNAL``, location
``stripped-weights.bin``, a file that does not exist).  Name, dims and data
type stay, so it is still an initializer (a parameter for nnergy) and shape
inference still works.  Smaller initializers (scales, shape constants) keep
their data.  Load such a file with ``onnx.load(path,
load_external_data=False)``.

How MACs are counted
--------------------
``mac_method`` in the manifest says which of these was used per file:

* ``dispatch``: the model runs forward at the given batch under a
  ``torch.utils._python_dispatch.TorchDispatchMode`` that adds the MACs of
  every aten.mm / addmm / bmm / baddbmm / matmul / dot / mv / addmv / linear /
  convolution (normal, grouped, transposed, 1/2/3-D) it sees: one MAC per
  multiply-accumulate of a matrix operation; elementwise operations, pooling,
  normalisation and softmax count 0.  Convolution: output elements x
  (C_in / groups) x kernel elements; transposed convolution: input elements x
  (C_out / groups) x kernel elements.  Models with nn.MultiheadAttention run
  with autograd enabled so that PyTorch's fused inference fast path
  (aten._native_multi_head_attention), which would hide the GEMMs, is not
  taken; the counter fails if it sees a fused attention op.
* ``closed-form+dispatch``: recurrent layers (LSTM, GRU) use the closed form
  seq x batch x gates x hidden x (input + hidden) per layer and direction
  (4 gates for LSTM, 3 for GRU); the dispatch count of the same run (PyTorch's
  CPU RNN kernel shows its gate GEMMs as addmm/mm) must agree, and the
  script fails otherwise.

Parameters: ``parameters_torch`` is ``sum(p.numel() for p in
model.parameters())``.  ``parameters_expected`` is what the exported file
really holds as trainable parameters, which differs where the exporter
rewrote them: an eval-mode export folds every BatchNorm into the preceding
bias-free Conv (its weight and bias, 2 x C, become one Conv bias, C), and
constant folding turns swin_t's relative position bias table
((2w-1)^2 x heads) gathered by a fixed index into one [1, heads, w^2, w^2]
tensor per block.  Both adjustments are computed in closed form from the
modules and checked against the file.  ``float_constant_elements`` counts the
remaining floating-point initializer elements that are not parameters
(constant tensors the exporter folded, e.g. attention masks, LSTM initial
states, scalars); BatchNorm running statistics are not counted anywhere.

How to run
----------
::

    /usr/bin/python3 tools/export_user_models.py [--out tests/fixtures/user_exports] [--only a,b]

It needs Debian 12's python3-torch (1.13), python3-torchvision (0.14) and
python3-onnx (1.12), visible only to ``/usr/bin/python3``.  With ``--only``
the manifest keeps the entries of the other files.
"""

import argparse
import collections
import copy
import json
import math
import os
import sys
import warnings

import onnx
import onnx.shape_inference
import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision
from torch.utils._python_dispatch import TorchDispatchMode

warnings.filterwarnings("ignore", category=UserWarning)

STRIP_MIN_ELEMENTS = 65  # initializers with more elements lose their data
STRIPPED_LOCATION = "stripped-weights.bin"
SIZE_WARN_BYTES = 200 * 1024
# The two Swin-T exports are ~1.25 MB each (6 000+ nodes of window-mask arithmetic that the
# exporter does not fold), the rest ~1.2 MB together.
TOTAL_LIMIT_BYTES = 4 * 1024 * 1024
DEFAULT_OPSET = 14  # torch 1.13's default opset_version

FLOAT_TYPES = {onnx.TensorProto.FLOAT, onnx.TensorProto.FLOAT16, onnx.TensorProto.DOUBLE,
               onnx.TensorProto.BFLOAT16}


from export_zoo import _base_version  # noqa: E402  (tools/ is the script directory)

TORCH_VERSION = _base_version(torch.__version__)
TORCHVISION_VERSION = _base_version(torchvision.__version__)


# ---------------------------------------------------------------------------
# Hand-written models, as a user would write them
# ---------------------------------------------------------------------------


class SelfAttentionMHA(nn.Module):
    """A bare nn.MultiheadAttention used as self-attention."""

    def __init__(self, dim=256, heads=4):
        super().__init__()
        self.attn = nn.MultiheadAttention(dim, heads, batch_first=True)

    def forward(self, x):
        out, _ = self.attn(x, x, x)
        return out


class Encoder(nn.Module):
    """nn.TransformerEncoder, 2 layers of d_model 256, 4 heads, FFN 2048 (default)."""

    def __init__(self, dim=256, heads=4, layers=2):
        super().__init__()
        layer = nn.TransformerEncoderLayer(dim, heads, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, num_layers=layers)

    def forward(self, x):
        return self.encoder(x)


class LSTMModel(nn.Module):
    def __init__(self, input_size=256, hidden=256, layers=2):
        super().__init__()
        self.lstm = nn.LSTM(input_size, hidden, num_layers=layers, batch_first=True)

    def forward(self, x):
        out, _ = self.lstm(x)
        return out


class GRUModel(nn.Module):
    """Sequence-first GRU (PyTorch's default layout): input [seq, batch, features]."""

    def __init__(self, input_size=128, hidden=256):
        super().__init__()
        self.gru = nn.GRU(input_size, hidden)

    def forward(self, x):
        out, _ = self.gru(x)
        return out


class EinsumAttention(nn.Module):
    def __init__(self, dim=256, heads=8):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        b, s, d = x.shape
        h = self.heads
        qkv = self.qkv(x).reshape(b, s, 3, h, d // h).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        scores = torch.einsum("bhqd,bhkd->bhqk", q, k) / math.sqrt(d // h)
        probs = scores.softmax(dim=-1)
        out = torch.einsum("bhqk,bhkd->bhqd", probs, v)
        return self.proj(out.transpose(1, 2).reshape(b, s, d))


class ChunkAttention(nn.Module):
    def __init__(self, dim=256, heads=4):
        super().__init__()
        self.heads = heads
        self.to_qkv = nn.Linear(dim, 3 * dim, bias=False)
        self.out = nn.Linear(dim, dim)

    def forward(self, x):
        b, s, d = x.size()
        q, k, v = self.to_qkv(x).chunk(3, dim=-1)
        q = q.view(b, s, self.heads, -1).transpose(1, 2)
        k = k.view(b, s, self.heads, -1).transpose(1, 2)
        v = v.view(b, s, self.heads, -1).transpose(1, 2)
        att = F.softmax(q @ k.transpose(-2, -1) * (d // self.heads) ** -0.5, dim=-1)
        y = (att @ v).transpose(1, 2).contiguous().view(b, s, d)
        return self.out(y)


class GPTBlock(nn.Module):
    """Pre-LN GPT block with a causal mask built in forward (triu + masked_fill(-inf))."""

    def __init__(self, dim=256, heads=4):
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(dim)
        self.c_attn = nn.Linear(dim, 3 * dim)
        self.c_proj = nn.Linear(dim, dim)
        self.ln2 = nn.LayerNorm(dim)
        self.fc = nn.Linear(dim, 4 * dim)
        self.act = nn.GELU(approximate="tanh")
        self.proj = nn.Linear(4 * dim, dim)

    def attention(self, x):
        b, t, c = x.size()
        q, k, v = self.c_attn(x).split(c, dim=2)
        q = q.view(b, t, self.heads, c // self.heads).transpose(1, 2)
        k = k.view(b, t, self.heads, c // self.heads).transpose(1, 2)
        v = v.view(b, t, self.heads, c // self.heads).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        mask = torch.triu(torch.ones(t, t, device=x.device), diagonal=1).bool()
        att = att.masked_fill(mask, float("-inf"))
        att = F.softmax(att, dim=-1)
        y = (att @ v).transpose(1, 2).contiguous().view(b, t, c)
        return self.c_proj(y)

    def forward(self, x):
        x = x + self.attention(self.ln1(x))
        return x + self.proj(self.act(self.fc(self.ln2(x))))


class HandLayerNorm(nn.Module):
    def __init__(self, dim, eps=1e-5):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.bias = nn.Parameter(torch.zeros(dim))
        self.eps = eps

    def forward(self, x):
        mean = x.mean(-1, keepdim=True)
        var = ((x - mean) ** 2).mean(-1, keepdim=True)
        return (x - mean) / torch.sqrt(var + self.eps) * self.weight + self.bias


class ErfGeluBlock(nn.Module):
    """Residual MLP block with LayerNorm and exact (erf) GELU written out by hand."""

    def __init__(self, dim=256, hidden=1024):
        super().__init__()
        self.norm = HandLayerNorm(dim)
        self.fc1 = nn.Linear(dim, hidden)
        self.fc2 = nn.Linear(hidden, dim)

    def forward(self, x):
        h = self.fc1(self.norm(x))
        h = 0.5 * h * (1.0 + torch.erf(h / math.sqrt(2.0)))
        return x + self.fc2(h)


def _double_conv(cin, cout):
    return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1), nn.ReLU(inplace=True),
                         nn.Conv2d(cout, cout, 3, padding=1), nn.ReLU(inplace=True))


class SmallUNet(nn.Module):
    def __init__(self, in_channels=3, classes=2, width=32):
        super().__init__()
        w = width
        self.enc1 = _double_conv(in_channels, w)
        self.enc2 = _double_conv(w, 2 * w)
        self.bottleneck = _double_conv(2 * w, 4 * w)
        self.pool = nn.MaxPool2d(2)
        self.up2 = nn.ConvTranspose2d(4 * w, 2 * w, 2, stride=2)
        self.dec2 = _double_conv(4 * w, 2 * w)
        self.up1 = nn.ConvTranspose2d(2 * w, w, 2, stride=2)
        self.dec1 = _double_conv(2 * w, w)
        self.head = nn.Conv2d(w, classes, 1)

    def forward(self, x):
        e1 = self.enc1(x)
        e2 = self.enc2(self.pool(e1))
        b = self.bottleneck(self.pool(e2))
        d2 = self.dec2(torch.cat([self.up2(b), e2], dim=1))
        d1 = self.dec1(torch.cat([self.up1(d2), e1], dim=1))
        return self.head(d1)


class BNNet(nn.Module):
    """Conv-BN-ReLU stack with dropout and a linear head (CIFAR-sized input)."""

    def __init__(self, classes=10):
        super().__init__()

        def block(cin, cout, stride):
            return [nn.Conv2d(cin, cout, 3, stride=stride, padding=1, bias=False),
                    nn.BatchNorm2d(cout), nn.ReLU(inplace=True)]

        self.features = nn.Sequential(*block(3, 32, 1), *block(32, 64, 2), *block(64, 128, 2),
                                      *block(128, 128, 1))
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.dropout = nn.Dropout(0.2)
        self.fc = nn.Linear(128, classes)

    def forward(self, x):
        return self.fc(self.dropout(torch.flatten(self.pool(self.features(x)), 1)))


class SegmentationOut(nn.Module):
    """torchvision segmentation models return a dict; users export its 'out' entry."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, x):
        return self.model(x)["out"]


# ---------------------------------------------------------------------------
# The corpus
# ---------------------------------------------------------------------------

BATCH_DYN = {"input": {0: "batch"}, "output": {0: "batch"}}
BATCH_SEQ_DYN = {"input": {0: "batch", 1: "seq"}, "output": {0: "batch", 1: "seq"}}

Entry = collections.namedtuple("Entry", [
    "name", "description", "source", "build", "input_shape", "opset", "dynamic_axes",
    "training", "other_batch", "batch_axis", "seq_len", "note"])


def entry(name, description, source, build, input_shape, opset=None, dynamic_axes=None,
          training=False, other_batch=8, batch_axis=0, seq_len=None, note=""):
    return Entry(name, description, source, build, input_shape, opset, dynamic_axes, training,
                 other_batch, batch_axis, seq_len, note)


def tv(name, **kwargs):
    return lambda: getattr(torchvision.models, name)(weights=None, **kwargs)


def corpus():
    img = [1, 3, 224, 224]
    return [
        entry("resnet18_opset13", "ResNet-18, static batch 1, opset 13", "torchvision.models",
              tv("resnet18"), img, opset=13),
        entry("resnet18_opset14", "ResNet-18, static batch 1, opset 14", "torchvision.models",
              tv("resnet18"), img, opset=14),
        entry("resnet18_opset17", "ResNet-18, static batch 1, opset 17", "torchvision.models",
              tv("resnet18"), img, opset=17),
        entry("resnet18_dynamic", "ResNet-18, dynamic batch, default opset",
              "torchvision.models", tv("resnet18"), img, dynamic_axes=BATCH_DYN),
        entry("mobilenet_v3_small_opset13", "MobileNetV3-Small, static batch 1, opset 13",
              "torchvision.models", tv("mobilenet_v3_small"), img, opset=13),
        entry("mobilenet_v3_small_opset17", "MobileNetV3-Small, static batch 1, opset 17",
              "torchvision.models", tv("mobilenet_v3_small"), img, opset=17),
        entry("shufflenet_v2_x0_5_dynamic", "ShuffleNetV2 x0.5, dynamic batch (channel "
              "shuffle reshapes by the run-time batch)", "torchvision.models",
              tv("shufflenet_v2_x0_5"), img, dynamic_axes=BATCH_DYN),
        entry("convnext_tiny", "ConvNeXt-Tiny, static batch 1", "torchvision.models",
              tv("convnext_tiny"), img),
        entry("vit_b_32", "ViT-B/32, static batch 1", "torchvision.models", tv("vit_b_32"), img),
        entry("vit_b_32_dynamic", "ViT-B/32, dynamic batch, opset 17", "torchvision.models",
              tv("vit_b_32"), img, opset=17, dynamic_axes=BATCH_DYN),
        entry("swin_t", "Swin-T, static batch 1", "torchvision.models", tv("swin_t"), img),
        entry("swin_t_dynamic", "Swin-T, dynamic batch, opset 17", "torchvision.models",
              tv("swin_t"), img, opset=17, dynamic_axes=BATCH_DYN),
        entry("fcn_resnet50_dynamic", "FCN-ResNet50 semantic segmentation ('out' of the "
              "returned dict), 224x224, dynamic batch", "torchvision.models.segmentation",
              lambda: SegmentationOut(torchvision.models.segmentation.fcn_resnet50(
                  weights=None, weights_backbone=None)),
              img, dynamic_axes=BATCH_DYN, other_batch=2),
        entry("r3d_18", "R3D-18 video classifier (Conv3d), 16 frames of 112x112, static batch 1",
              "torchvision.models.video", lambda: torchvision.models.video.r3d_18(weights=None),
              [1, 3, 16, 112, 112], other_batch=2),
        entry("transformer_encoder", "nn.TransformerEncoder, 2 layers, d_model 256, 4 heads, "
              "FFN 2048, batch_first, dynamic batch and seq", "torch.nn", Encoder,
              [2, 128, 256], dynamic_axes=BATCH_SEQ_DYN, seq_len=128),
        entry("multihead_attention", "bare nn.MultiheadAttention(256, 4, batch_first=True) "
              "as self-attention, dynamic batch", "torch.nn", SelfAttentionMHA, [1, 64, 256],
              dynamic_axes=BATCH_DYN, seq_len=64),
        entry("lstm_static", "2-layer LSTM, input 256, hidden 256, batch_first, seq 512, "
              "static batch 32", "torch.nn", LSTMModel, [32, 512, 256], seq_len=512),
        entry("lstm_dynamic", "2-layer LSTM, input 256, hidden 256, batch_first, seq 512, "
              "dynamic batch", "torch.nn", LSTMModel, [32, 512, 256], dynamic_axes=BATCH_DYN,
              seq_len=512),
        entry("gru_seq_first", "1-layer GRU, input 128, hidden 256, sequence-first layout "
              "[seq 128, batch, 128], dynamic batch on axis 1", "torch.nn", GRUModel,
              [128, 16, 128], dynamic_axes={"input": {1: "batch"}, "output": {1: "batch"}},
              batch_axis=1, seq_len=128,
              note="the batch is axis 1, so it must be bound by name (--dim batch=N)"),
        entry("einsum_attention", "hand-written attention with torch.einsum('bhqd,bhkd->bhqk') "
              "and 'bhqk,bhkd->bhqd', 8 heads, d 256, shapes read from x.shape, dynamic batch "
              "and seq", "torch.nn", EinsumAttention, [2, 128, 256],
              dynamic_axes=BATCH_SEQ_DYN, seq_len=128),
        entry("chunk_attention", "hand-written attention, q, k, v = qkv.chunk(3, -1), "
              "4 heads, d 256, dynamic batch", "torch.nn", ChunkAttention, [2, 128, 256],
              dynamic_axes=BATCH_DYN, seq_len=128),
        entry("gpt_block", "GPT-style pre-LN block, causal mask torch.triu + masked_fill(-inf), "
              "tanh GELU, d 256, 4 heads, dynamic batch and seq", "torch.nn", GPTBlock,
              [2, 128, 256], dynamic_axes=BATCH_SEQ_DYN, seq_len=128),
        entry("erf_gelu_block", "MLP block with hand-written LayerNorm (mean/var/sqrt) and "
              "erf GELU, d 256, hidden 1024, dynamic batch", "torch.nn", ErfGeluBlock,
              [2, 128, 256], dynamic_axes=BATCH_DYN, seq_len=128),
        entry("small_unet", "small UNet: Conv, MaxPool, ConvTranspose2d, Concat skips, 128x128, "
              "dynamic batch", "torch.nn", SmallUNet, [1, 3, 128, 128], dynamic_axes=BATCH_DYN),
        entry("bn_net_eval", "Conv-BN-ReLU network, eval-mode export (BatchNorm folded into "
              "Conv, the default)", "torch.nn", BNNet, [1, 3, 32, 32], dynamic_axes=BATCH_DYN),
        entry("bn_net_training", "Conv-BN-ReLU network, training-mode export "
              "(TrainingMode.TRAINING, do_constant_folding=False)", "torch.nn", BNNet,
              [1, 3, 32, 32], dynamic_axes=BATCH_DYN, training=True),
    ]


# ---------------------------------------------------------------------------
# MAC counting at the PyTorch dispatch level
# ---------------------------------------------------------------------------


def _numel(shape):
    n = 1
    for d in shape:
        n *= int(d)
    return n


class MacCounter(TorchDispatchMode):
    """Adds the multiply-accumulates of the matrix operations PyTorch dispatches."""

    FUSED = ("_native_multi_head_attention", "_transformer_encoder_layer_fwd",
             "_scaled_dot_product", "lstm", "gru", "rnn_tanh", "rnn_relu")

    def __init__(self):
        super().__init__()
        self.macs = 0
        self.by_op = collections.Counter()

    def _add(self, op, macs):
        self.macs += int(macs)
        self.by_op[op] += int(macs)

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        name = func.overloadpacket.__name__
        if any(name.startswith(f) for f in self.FUSED):
            raise RuntimeError(f"fused operator {func} hides its GEMMs from the MAC counter")
        if name in ("mm", "addmm"):
            a, b = (args[0], args[1]) if name == "mm" else (args[1], args[2])
            self._add(name, a.shape[0] * a.shape[1] * b.shape[1])
        elif name in ("bmm", "baddbmm"):
            a, b = (args[0], args[1]) if name == "bmm" else (args[1], args[2])
            self._add(name, a.shape[0] * a.shape[1] * a.shape[2] * b.shape[2])
        elif name == "matmul":
            self._add(name, _numel(out.shape) * args[0].shape[-1])
        elif name == "linear":
            self._add(name, _numel(out.shape) * args[1].shape[-1])
        elif name in ("mv", "addmv"):
            a = args[0] if name == "mv" else args[1]
            self._add(name, a.shape[0] * a.shape[1])
        elif name == "dot":
            self._add(name, args[0].shape[0])
        elif name in ("convolution", "_convolution"):
            inp, weight = args[0], args[1]
            transposed = bool(args[6])
            per = _numel(weight.shape[1:])  # (C_in or C_out)/groups x kernel elements
            self._add("conv_transpose" if transposed else "conv",
                      (_numel(inp.shape) if transposed else _numel(out.shape)) * per)
        elif name in ("einsum", "tensordot", "conv1d", "conv2d", "conv3d", "conv_transpose1d",
                      "conv_transpose2d", "conv_transpose3d"):
            # Composite operators decompose into the ones above before they reach a mode.
            raise RuntimeError(f"unexpected composite operator {func} at dispatch level")
        return out


def rnn_closed_form(model, x, batch_first):
    """seq x batch x gates x hidden x (input + hidden), per layer and direction."""
    total = 0
    for module in model.modules():
        if isinstance(module, (nn.LSTM, nn.GRU)):
            gates = 4 if isinstance(module, nn.LSTM) else 3
            seq, batch = (x.shape[1], x.shape[0]) if batch_first else (x.shape[0], x.shape[1])
            dirs = 2 if module.bidirectional else 1
            for layer in range(module.num_layers):
                inp = module.input_size if layer == 0 else module.hidden_size * dirs
                total += dirs * seq * batch * gates * module.hidden_size * (
                    inp + module.hidden_size)
    return total


def count_macs(model, x):
    """Returns (macs, method, detail)."""
    has_mha = any(isinstance(m, nn.MultiheadAttention) for m in model.modules())
    grad = torch.enable_grad() if has_mha else torch.no_grad()
    counter = MacCounter()
    with grad, counter:
        model(x)
    rnns = [m for m in model.modules() if isinstance(m, (nn.LSTM, nn.GRU))]
    if rnns:
        closed = rnn_closed_form(model, x, rnns[0].batch_first)
        if closed != counter.macs:
            raise RuntimeError(f"RNN closed form {closed} != dispatch count {counter.macs}")
        return closed, "closed-form+dispatch", dict(counter.by_op)
    return counter.macs, "dispatch", dict(counter.by_op)


# ---------------------------------------------------------------------------
# Parameters
# ---------------------------------------------------------------------------


def expected_parameters(model, onnx_ops, training):
    """Parameters the exported file should hold (see the module doc); returns (count, note)."""
    count = sum(p.numel() for p in model.parameters())
    notes = []
    bns = [m for m in model.modules() if isinstance(m, nn.modules.batchnorm._BatchNorm)]
    if bns and not training and onnx_ops.get("BatchNormalization", 0) == 0:
        # Folded into the preceding Conv: weight and bias (2C) become one Conv bias (C).
        # Every Conv in front of a BatchNorm in these models is bias-free.
        removed = sum(bn.num_features for bn in bns)
        count -= removed
        notes.append(f"{len(bns)} BatchNorms folded into Conv: -{removed} "
                     f"(2C weight+bias become a C Conv bias)")
    extra = 0
    blocks = 0
    for m in model.modules():
        table = getattr(m, "relative_position_bias_table", None)
        if table is not None:
            window = m.window_size[0] * m.window_size[1]
            extra += window * window * m.num_heads - table.numel()
            blocks += 1
    if extra:
        count += extra
        notes.append(f"relative position bias of {blocks} blocks constant-folded from "
                     f"[(2w-1)^2, heads] tables to [1, heads, w^2, w^2]: +{extra}")
    return count, "; ".join(notes)


# ---------------------------------------------------------------------------
# Export and post-processing
# ---------------------------------------------------------------------------


@torch.no_grad()
def perturb(model):
    """Distinct parameter values, as after training (see the module doc)."""
    for tensor in list(model.parameters()) + list(model.buffers()):
        if tensor.is_floating_point():
            tensor.add_(torch.randn_like(tensor) * 1e-3)
    for module in model.modules():
        if isinstance(module, nn.modules.batchnorm._BatchNorm):
            module.running_mean.normal_()
            module.running_var.uniform_(0.5, 1.5)


def build(e):
    torch.manual_seed(0)
    model = e.build()
    perturb(model)
    model.train(e.training)
    return model


def export_call(e):
    """The torch.onnx.export keyword arguments (and their text for the manifest)."""
    kwargs = {"input_names": ["input"], "output_names": ["output"]}
    if e.dynamic_axes:
        kwargs["dynamic_axes"] = e.dynamic_axes
    if e.opset:
        kwargs["opset_version"] = e.opset
    if e.training:
        kwargs["training"] = torch.onnx.TrainingMode.TRAINING
        kwargs["do_constant_folding"] = False
    text = ", ".join(f"{k}={v!r}" for k, v in kwargs.items())
    text = text.replace("<TrainingMode.TRAINING: 2>", "torch.onnx.TrainingMode.TRAINING")
    return kwargs, f"torch.onnx.export(model, x, f, {text})"


def strip_weights(model):
    """Drop the data of large floating-point initializers; returns (count, elements)."""
    stripped = elements = 0
    for init in model.graph.initializer:
        n = _numel(init.dims)
        if init.data_type not in FLOAT_TYPES or n < STRIP_MIN_ELEMENTS:
            continue
        init.ClearField("raw_data")
        init.ClearField("float_data")
        init.ClearField("double_data")
        init.ClearField("int32_data")  # float16/bfloat16 values live here
        del init.external_data[:]
        init.data_location = onnx.TensorProto.EXTERNAL
        entry_ = init.external_data.add()
        entry_.key = "location"
        entry_.value = STRIPPED_LOCATION
        stripped += 1
        elements += n
    return stripped, elements


def bn_statistics(model):
    names = set()
    for node in model.graph.node:
        if node.op_type == "BatchNormalization":
            names.update(node.input[3:5])
    return names


def input_dims(model):
    result = {}
    for value in model.graph.input:
        dims = [d.dim_param if d.dim_param else d.dim_value
                for d in value.type.tensor_type.shape.dim]
        result[value.name] = dims
    return result


def check_shapes(model):
    """Shape inference (as nnergy runs it) must still type every graph output."""
    inferred = onnx.shape_inference.infer_shapes(model, strict_mode=True, data_prop=True)
    for out in inferred.graph.output:
        if not out.type.tensor_type.HasField("shape"):
            raise RuntimeError(f"output {out.name} has no inferred shape")


def make_input(e, batch):
    shape = list(e.input_shape)
    shape[e.batch_axis] = batch
    torch.manual_seed(1)
    return torch.randn(*shape)


def process(e, out_dir):
    path = os.path.join(out_dir, f"{e.name}.onnx")
    model = build(e)
    kwargs, call_text = export_call(e)
    exported_batch = e.input_shape[e.batch_axis]
    x = make_input(e, exported_batch)
    torch.onnx.export(model, x, path, **kwargs)

    proto = onnx.load(path)
    stripped, stripped_elements = strip_weights(proto)
    check_shapes(proto)
    onnx.save(proto, path)
    size = os.path.getsize(path)
    ops = collections.Counter(n.op_type if n.domain in ("", "ai.onnx") else
                              f"{n.domain}.{n.op_type}" for n in proto.graph.node)

    stats = bn_statistics(proto)
    float_elements = sum(_numel(i.dims) for i in proto.graph.initializer
                         if i.data_type in FLOAT_TYPES and i.name not in stats)
    params_torch = sum(p.numel() for p in model.parameters())
    params_expected, param_note = expected_parameters(model, ops, e.training)
    constants = float_elements - params_expected
    if constants < 0:
        raise RuntimeError(f"{e.name}: file holds {float_elements} float initializer elements, "
                           f"fewer than the {params_expected} parameters expected")

    dims = input_dims(proto)
    data_inputs = [n for n in dims if n not in {i.name for i in proto.graph.initializer}]
    symbolic = sorted({d for n in data_inputs for d in dims[n] if isinstance(d, str)})
    named = {}
    if e.seq_len is not None and "seq" in symbolic:
        named["seq"] = e.seq_len
    if e.batch_axis != 0 and "batch" in symbolic:
        named["batch"] = None  # filled per case
    unknown = [d for d in symbolic if d not in ("batch", "seq")]
    if unknown:
        raise RuntimeError(f"{e.name}: unexpected symbolic dims {unknown}")

    cases = []
    method = detail_method = None
    # Static exports whose batch nnergy must refuse to re-bind (exit 2 with the dynamic_axes
    # fix): the exporter folded the batch into a literal target or a constant initial state.
    refused_rebind = {
        "vit_b_32": "nn.MultiheadAttention's view(tgt_len, bsz * num_heads, head_dim) folded",
        "swin_t": "the window partition's view(B, H // w, w, W // w, w, C) folded",
        "lstm_static": "the zero initial state (h0, c0) is a Constant of the exported batch",
    }
    for batch in (exported_batch, e.other_batch):
        torch.manual_seed(0)
        counting = build(e)
        macs, method, by_op = count_macs(counting, make_input(e, batch))
        case_named = {k: (batch if v is None else v) for k, v in named.items()}
        case = {"batch": batch, "macs": macs, "macs_by_aten_op": by_op,
                "bindings": {"batch": batch, "named": case_named}}
        if batch != exported_batch and e.name in refused_rebind:
            case["nnergy_refuses"] = refused_rebind[e.name]
        cases.append(case)
        detail_method = method

    dynamic = None
    if e.dynamic_axes:
        dynamic = {k: {str(a): n for a, n in v.items()} for k, v in e.dynamic_axes.items()}
    item = {
        "file": f"{e.name}.onnx",
        "description": e.description,
        "source": e.source,
        "export": {
            "torch_version": TORCH_VERSION,
            "torchvision_version": TORCHVISION_VERSION,
            "onnx_version": onnx.__version__,
            "opset": e.opset or DEFAULT_OPSET,
            "opset_explicit": e.opset is not None,
            "call": call_text,
            "static": not e.dynamic_axes,
            "dynamic_axes": dynamic,
            "training_mode": "TRAINING" if e.training else "EVAL (default)",
            "do_constant_folding": not e.training,
            "export_params": True,
        },
        "data_inputs": [{"name": n, "dims": dims[n]} for n in data_inputs],
        "input_shape_at_export": list(e.input_shape),
        "batch_axis": e.batch_axis,
        "exported_batch": exported_batch,
        "seq_len": e.seq_len,
        "dim_bindings": [f"{k}={v}" for k, v in named.items() if v is not None],
        "mac_method": detail_method,
        "cases": cases,
        "parameters_torch": params_torch,
        "parameters_expected": params_expected,
        "parameter_note": param_note,
        "float_constant_elements": constants,
        "stripped_initializers": stripped,
        "stripped_elements": stripped_elements,
        "onnx_ops": dict(sorted(ops.items())),
        "file_bytes": size,
    }
    if e.note:
        item["note"] = e.note
    return item


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=os.path.join("tests", "fixtures", "user_exports"))
    parser.add_argument("--only", default="", help="comma-separated names (default: all)")
    args = parser.parse_args(argv)
    torch.set_num_threads(max(1, os.cpu_count() or 1))

    entries = corpus()
    if args.only:
        wanted = {n.strip() for n in args.only.split(",") if n.strip()}
        unknown = wanted - {e.name for e in entries}
        if unknown:
            parser.error(f"unknown: {', '.join(sorted(unknown))}")
        entries = [e for e in entries if e.name in wanted]
    os.makedirs(args.out, exist_ok=True)
    manifest_path = os.path.join(args.out, "manifest.json")
    previous = {}
    if args.only and os.path.exists(manifest_path):
        with open(manifest_path) as f:
            previous = {m["file"]: m for m in json.load(f)["models"]}

    failures = []
    for e in entries:
        try:
            item = process(e, args.out)
        except Exception as exc:  # report every failure, then exit non-zero
            failures.append(e.name)
            print(f"FAILED {e.name}: {type(exc).__name__}: {exc}", file=sys.stderr, flush=True)
            continue
        previous[item["file"]] = item
        macs = ", ".join(f"b{c['batch']} {c['macs'] / 1e9:.3f} GMAC" for c in item["cases"])
        flag = "  (> 200 KB)" if item["file_bytes"] > SIZE_WARN_BYTES else ""
        print(f"{e.name:28s} {item['file_bytes'] / 1024:7.1f} KB{flag}  {macs}  "
              f"params {item['parameters_expected']}", flush=True)

    order = [f"{e.name}.onnx" for e in corpus()]
    models = [previous[f] for f in order if f in previous]
    manifest = {
        "description": "User-style torch.onnx.export files with MAC counts from PyTorch "
                       "(tools/export_user_models.py); weights stripped (external data "
                       f"'{STRIPPED_LOCATION}', which does not exist)",
        "mac_convention": "1 MAC per multiply-accumulate of matrix operations (Conv, "
                          "ConvTranspose, Gemm/Linear, MatMul/bmm, Einsum, RNN gate GEMMs); "
                          "elementwise, normalisation, pooling and softmax count 0",
        "models": models,
    }
    with open(manifest_path, "w") as f:
        json.dump(manifest, f, indent=1)
        f.write("\n")
    total = sum(m["file_bytes"] for m in models)
    print(f"{len(models)} files, {total / 1024:.1f} KB in all", flush=True)
    if total > TOTAL_LIMIT_BYTES:
        print(f"total size above {TOTAL_LIMIT_BYTES} bytes", file=sys.stderr)
        failures.append("total size")
    if failures:
        print(f"failed: {', '.join(failures)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
