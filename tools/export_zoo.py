#!/usr/bin/python3
"""Export the nnergy model zoo as architecture-only ONNX files.

Purpose
-------
nnergy predicts the time, power and energy of deep neural networks from their
*architecture*; it never needs trained weights.  This script writes one ONNX
file per zoo model into ``data/zoo/`` (by default).  The files are exported
with ``export_params=False``: every parameter and buffer becomes a graph input
(carrying its name, dtype and shape) instead of an initializer, so each file is
only tens of kilobytes.  The real data input(s) of each model are listed in
the ``nnergy.data_inputs`` metadata property; every other graph input is a
parameter.

The zoo holds 18 torchvision image classifiers (built with ``weights=None``,
nothing is downloaded) with one image input ``input`` of shape
``[batch, 3, 224, 224]``, plus two transformer models written with
``torch.nn`` in this file: ``bert_base`` (BERT-base encoder with pooler) and
``gpt2_small`` (GPT-2-small decoder with LM head), each with one input
``input_ids`` (int64, ``[batch, 128]``).  Dimension 0 of the data input and of
the output is the symbolic dimension ``batch``.

How to run
----------
::

    /usr/bin/python3 tools/export_zoo.py [--out data/zoo] [--only name1,name2]

It needs Debian 12's ``python3-torch`` (1.13), ``python3-torchvision`` (0.14)
and ``python3-onnx`` (1.12)::

    apt-get install -y python3-torch python3-torchvision python3-onnx

These are only needed to regenerate the files; nnergy itself never runs this
script.  Output is deterministic (``torch.manual_seed(0)`` before every model):
running the script twice produces byte-identical files.

Export settings and what was found
----------------------------------
* Models are put in eval mode and exported with
  ``training=TrainingMode.PRESERVE`` and ``do_constant_folding=True``, so
  Dropout (and torchvision's StochasticDepth) export as inference, i.e. they
  vanish instead of becoming training-mode Dropout nodes with random masks.
* BatchNorm is kept as ``BatchNormalization`` nodes in eval mode.  With
  ``export_params=False`` the exporter has no parameter values to fold into
  the preceding Conv, so no BN fusion happens; ResNet-50 has exactly 53 Conv
  and 53 BatchNormalization nodes (checked below).  Training-mode export was
  therefore not needed.
* However, torch 1.13 de-duplicates parameters whose *values* are identical
  (e.g. freshly initialised BatchNorm/LayerNorm weights of all ones and biases
  of all zeros): the duplicates are dropped as graph inputs and replaced by
  ``Identity`` nodes (94 of them in ResNet-50).  To prevent this, every
  floating-point parameter and buffer gets a small random perturbation, and
  every BatchNorm gets random running_mean (normal), running_var (uniform
  0.5-1.5), weight and bias before export.  The script fails if any
  ``Identity`` node remains.
* Constant folding also acts on parameters: a Linear applied to a 3-D input
  exports as MatMul + Add, and its transposed weight becomes a new graph input
  named ``onnx::MatMul_<n>`` in [in, out] layout; swin_t's relative position
  bias (table gathered by a fixed index) becomes one input
  ``onnx::Add_<n>`` of shape [1, heads, 49, 49].  These names are left as the
  exporter wrote them.
* The two hand-written models use fixed sizes (sequence length, heads, head
  size) in their reshapes, with ``-1`` only for the batch dimension, so they
  produce no Shape->Gather->Concat->Reshape chains.  Their constant index
  tensors (position ids, token-type ids, the GPT-2 causal mask) are
  non-persistent buffers built for the actual sequence length of 128, so they
  are traced as small constants rather than graph inputs.
* opset 17 (one ``LayerNormalization`` op per LayerNorm) is used for the
  torchvision models and bert_base; opset 14 for gpt2_small (LayerNorm appears
  decomposed into ReduceMean/Sub/Pow/Add/Sqrt/Div/Mul/Add).  opset 17 works
  for every model with torch 1.13.

Post-processing
---------------
After export each file is re-opened with ``onnx`` and:

* doc strings are stripped;
* no-op Dropout nodes are removed: torchvision 0.14's swin_t calls
  ``F.dropout(p=0.0)`` in its attention without the module's training flag,
  so those 24 Dropouts export in training mode (ratio 0, i.e. the identity);
* shape computations are folded (``fold_shape_computations``):
  shufflenet_v2_x1_0, vit_b_16 and swin_t compute reshape targets, pads,
  slice bounds etc. at run time from Shape nodes through ops (Div, Cast,
  Range, Where, ConstantOfShape, ...) that onnx 1.12's data propagation
  cannot follow, so shape inference leaves those tensors without shapes.
  As only the batch dimension is dynamic these values are constants (or
  multiples of the batch size); they are evaluated and replaced by Constant
  nodes, by ``-1`` in a Reshape target, or by Gather(Shape(input), 0);
* identical Constant nodes are merged (the exporter writes one copy per use;
  e.g. the 16 KB GPT-2 causal mask would otherwise appear once per block);
* graph output shapes are written in full (the exporter left a symbolic
  sequence dimension on gpt2_small's output);
* the metadata properties ``nnergy.description``, ``nnergy.source`` and
  ``nnergy.data_inputs`` are added.

Validation
----------
The script exits with an error if any check fails for any model:

* ``onnx.checker.check_model``;
* on a copy with the ``batch`` dimension set to 2, strict shape inference with
  data propagation (``onnx.shape_inference.infer_shapes(m, strict_mode=True,
  data_prop=True)``) must give every used node output a fully static shape —
  the C++ importer performs the same inference;
* the declared output shape matches the one torch computes;
* no initializers, no ``Identity`` or ``Dropout`` nodes, file size below
  300 KB;
* ResNet-50: exactly 53 Conv and 53 BatchNormalization nodes.
"""

import argparse
import collections
import copy
import math
import os
import re
import sys
import warnings

import numpy as np
import onnx
import onnx.numpy_helper
import torch
import torch.nn as nn
import torchvision

# Emitted for every export with TrainingMode.PRESERVE; it concerns models
# exported in training mode, and these are all exported in eval mode.
warnings.filterwarnings("ignore", message="It is recommended that constant folding be turned off")

SEQ_LEN = 128
MAX_FILE_BYTES = 300 * 1024


def _base_version(version):
    """'0.14.1a0' -> '0.14.1' (Debian builds carry a local suffix)."""
    match = re.match(r"\d+(\.\d+)*", version)
    return match.group(0) if match else version


TORCH_VERSION = _base_version(torch.__version__)
TORCHVISION_VERSION = _base_version(torchvision.__version__)


# ---------------------------------------------------------------------------
# BERT-base encoder
# ---------------------------------------------------------------------------


class BertEmbeddings(nn.Module):
    def __init__(self, vocab_size, hidden, max_positions, type_vocab_size, seq_len, dropout):
        super().__init__()
        # Index tensors for the actual sequence length (all-zero token types).  They
        # are not persistent, so they are traced as small constants, not graph inputs.
        self.register_buffer("position_ids", torch.arange(seq_len).unsqueeze(0),
                             persistent=False)
        self.register_buffer("token_type_ids", torch.zeros(1, seq_len, dtype=torch.long),
                             persistent=False)
        self.word_embeddings = nn.Embedding(vocab_size, hidden)
        self.position_embeddings = nn.Embedding(max_positions, hidden)
        self.token_type_embeddings = nn.Embedding(type_vocab_size, hidden)
        self.LayerNorm = nn.LayerNorm(hidden, eps=1e-12)
        self.dropout = nn.Dropout(dropout)

    def forward(self, input_ids):
        x = (self.word_embeddings(input_ids)
             + self.position_embeddings(self.position_ids)
             + self.token_type_embeddings(self.token_type_ids))
        return self.dropout(self.LayerNorm(x))


class BertSelfAttention(nn.Module):
    def __init__(self, hidden, heads, seq_len, dropout):
        super().__init__()
        self.heads = heads
        self.head_dim = hidden // heads
        self.seq_len = seq_len
        self.query = nn.Linear(hidden, hidden)
        self.key = nn.Linear(hidden, hidden)
        self.value = nn.Linear(hidden, hidden)
        self.dropout = nn.Dropout(dropout)

    def _split_heads(self, x):
        # [B, S, H] -> [B, heads, S, head_dim]; only the batch size is inferred.
        return x.reshape(-1, self.seq_len, self.heads, self.head_dim).transpose(1, 2)

    def forward(self, x):
        q = self._split_heads(self.query(x))
        k = self._split_heads(self.key(x))
        v = self._split_heads(self.value(x))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_dim)
        probs = self.dropout(torch.softmax(scores, dim=-1))
        context = torch.matmul(probs, v).transpose(1, 2)
        return context.reshape(-1, self.seq_len, self.heads * self.head_dim)


class BertSelfOutput(nn.Module):
    def __init__(self, hidden, dropout):
        super().__init__()
        self.dense = nn.Linear(hidden, hidden)
        self.dropout = nn.Dropout(dropout)
        self.LayerNorm = nn.LayerNorm(hidden, eps=1e-12)

    def forward(self, x, residual):
        return self.LayerNorm(self.dropout(self.dense(x)) + residual)


class BertAttention(nn.Module):
    def __init__(self, hidden, heads, seq_len, dropout):
        super().__init__()
        self.self = BertSelfAttention(hidden, heads, seq_len, dropout)
        self.output = BertSelfOutput(hidden, dropout)

    def forward(self, x):
        return self.output(self.self(x), x)


class BertIntermediate(nn.Module):
    def __init__(self, hidden, ffn):
        super().__init__()
        self.dense = nn.Linear(hidden, ffn)
        self.intermediate_act_fn = nn.GELU()

    def forward(self, x):
        return self.intermediate_act_fn(self.dense(x))


class BertOutput(nn.Module):
    def __init__(self, ffn, hidden, dropout):
        super().__init__()
        self.dense = nn.Linear(ffn, hidden)
        self.dropout = nn.Dropout(dropout)
        self.LayerNorm = nn.LayerNorm(hidden, eps=1e-12)

    def forward(self, x, residual):
        return self.LayerNorm(self.dropout(self.dense(x)) + residual)


class BertLayer(nn.Module):
    def __init__(self, hidden, heads, ffn, seq_len, dropout):
        super().__init__()
        self.attention = BertAttention(hidden, heads, seq_len, dropout)
        self.intermediate = BertIntermediate(hidden, ffn)
        self.output = BertOutput(ffn, hidden, dropout)

    def forward(self, x):
        x = self.attention(x)
        return self.output(self.intermediate(x), x)


class BertEncoder(nn.Module):
    def __init__(self, layers, hidden, heads, ffn, seq_len, dropout):
        super().__init__()
        self.layer = nn.ModuleList(
            BertLayer(hidden, heads, ffn, seq_len, dropout) for _ in range(layers))

    def forward(self, x):
        for layer in self.layer:
            x = layer(x)
        return x


class BertPooler(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.dense = nn.Linear(hidden, hidden)
        self.activation = nn.Tanh()

    def forward(self, x):
        return self.activation(self.dense(x[:, 0]))


class BertBase(nn.Module):
    """BERT-base encoder (12 layers, H=768, 12 heads, FFN 3072) with pooler.

    No attention mask (all tokens attend to all tokens) and all-zero token-type
    ids.  The output is the pooled first-token representation [batch, 768].
    """

    def __init__(self, vocab_size=30522, hidden=768, layers=12, heads=12, ffn=3072,
                 max_positions=512, type_vocab_size=2, seq_len=SEQ_LEN, dropout=0.1):
        super().__init__()
        self.embeddings = BertEmbeddings(vocab_size, hidden, max_positions,
                                         type_vocab_size, seq_len, dropout)
        self.encoder = BertEncoder(layers, hidden, heads, ffn, seq_len, dropout)
        self.pooler = BertPooler(hidden)

    def forward(self, input_ids):
        return self.pooler(self.encoder(self.embeddings(input_ids)))


# ---------------------------------------------------------------------------
# GPT-2-small decoder
# ---------------------------------------------------------------------------


class GPT2Attention(nn.Module):
    def __init__(self, hidden, heads, seq_len, dropout):
        super().__init__()
        self.hidden = hidden
        self.heads = heads
        self.head_dim = hidden // heads
        self.seq_len = seq_len
        self.c_attn = nn.Linear(hidden, 3 * hidden)
        self.c_proj = nn.Linear(hidden, hidden)
        self.attn_dropout = nn.Dropout(dropout)
        self.resid_dropout = nn.Dropout(dropout)

    def _split_heads(self, x):
        return x.reshape(-1, self.seq_len, self.heads, self.head_dim).transpose(1, 2)

    def forward(self, x, causal_mask):
        q, k, v = self.c_attn(x).split(self.hidden, dim=2)
        q, k, v = self._split_heads(q), self._split_heads(k), self._split_heads(v)
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_dim)
        scores = scores.masked_fill(causal_mask, float("-inf"))
        probs = self.attn_dropout(torch.softmax(scores, dim=-1))
        context = torch.matmul(probs, v).transpose(1, 2)
        context = context.reshape(-1, self.seq_len, self.hidden)
        return self.resid_dropout(self.c_proj(context))


class GPT2MLP(nn.Module):
    def __init__(self, hidden, ffn, dropout):
        super().__init__()
        self.c_fc = nn.Linear(hidden, ffn)
        self.act = nn.GELU(approximate="tanh")
        self.c_proj = nn.Linear(ffn, hidden)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        return self.dropout(self.c_proj(self.act(self.c_fc(x))))


class GPT2Block(nn.Module):
    def __init__(self, hidden, heads, ffn, seq_len, dropout):
        super().__init__()
        self.ln_1 = nn.LayerNorm(hidden, eps=1e-5)
        self.attn = GPT2Attention(hidden, heads, seq_len, dropout)
        self.ln_2 = nn.LayerNorm(hidden, eps=1e-5)
        self.mlp = GPT2MLP(hidden, ffn, dropout)

    def forward(self, x, causal_mask):
        x = x + self.attn(self.ln_1(x), causal_mask)
        return x + self.mlp(self.ln_2(x))


class GPT2Small(nn.Module):
    """GPT-2-small decoder (12 blocks, H=768, 12 heads, FFN 3072) with LM head.

    The LM head is untied from the token embedding.  The output is the logits
    tensor [batch, 128, 50257].
    """

    def __init__(self, vocab_size=50257, hidden=768, layers=12, heads=12, ffn=3072,
                 max_positions=1024, seq_len=SEQ_LEN, dropout=0.1):
        super().__init__()
        self.wte = nn.Embedding(vocab_size, hidden)
        self.wpe = nn.Embedding(max_positions, hidden)
        self.drop = nn.Dropout(dropout)
        self.h = nn.ModuleList(
            GPT2Block(hidden, heads, ffn, seq_len, dropout) for _ in range(layers))
        self.ln_f = nn.LayerNorm(hidden, eps=1e-5)
        self.lm_head = nn.Linear(hidden, vocab_size, bias=False)
        # Constants for the actual sequence length.  They are not persistent, so
        # they are traced as small constants (the mask once, shared by all blocks),
        # not graph inputs.  causal_mask is True above the diagonal (future tokens).
        self.register_buffer("position_ids", torch.arange(seq_len).unsqueeze(0),
                             persistent=False)
        future = torch.triu(torch.ones(seq_len, seq_len, dtype=torch.bool), diagonal=1)
        self.register_buffer("causal_mask", future.view(1, 1, seq_len, seq_len),
                             persistent=False)

    def forward(self, input_ids):
        x = self.drop(self.wte(input_ids) + self.wpe(self.position_ids))
        for block in self.h:
            x = block(x, self.causal_mask)
        return self.lm_head(self.ln_f(x))


# ---------------------------------------------------------------------------
# Zoo definition
# ---------------------------------------------------------------------------

IMAGE_SHAPE = [3, 224, 224]

# name -> (constructor name, extra kwargs, description)
TORCHVISION_MODELS = {
    "alexnet": ("alexnet", {}, "AlexNet image classifier"),
    "vgg16": ("vgg16", {}, "VGG-16 image classifier"),
    "vgg19": ("vgg19", {}, "VGG-19 image classifier"),
    "resnet18": ("resnet18", {}, "ResNet-18 image classifier"),
    "resnet34": ("resnet34", {}, "ResNet-34 image classifier"),
    "resnet50": ("resnet50", {}, "ResNet-50 image classifier"),
    "resnet101": ("resnet101", {}, "ResNet-101 image classifier"),
    "resnet152": ("resnet152", {}, "ResNet-152 image classifier"),
    "mobilenet_v2": ("mobilenet_v2", {}, "MobileNetV2 image classifier"),
    "mobilenet_v3_large": ("mobilenet_v3_large", {}, "MobileNetV3-Large image classifier"),
    "efficientnet_b0": ("efficientnet_b0", {}, "EfficientNet-B0 image classifier"),
    "densenet121": ("densenet121", {}, "DenseNet-121 image classifier"),
    "convnext_base": ("convnext_base", {}, "ConvNeXt-Base image classifier"),
    "squeezenet1_1": ("squeezenet1_1", {}, "SqueezeNet 1.1 image classifier"),
    "googlenet": ("googlenet", {"aux_logits": False, "init_weights": False},
                  "GoogLeNet (Inception v1) image classifier"),
    "shufflenet_v2_x1_0": ("shufflenet_v2_x1_0", {}, "ShuffleNetV2 x1.0 image classifier"),
    "vit_b_16": ("vit_b_16", {}, "Vision Transformer ViT-B/16 image classifier"),
    "swin_t": ("swin_t", {}, "Swin Transformer Tiny image classifier"),
}


class ZooEntry:
    def __init__(self, name, build, example, input_name, opset, description, source):
        self.name = name
        self.build = build
        self.example = example
        self.input_name = input_name
        self.opset = opset
        self.description = description
        self.source = source


def _format_kwargs(kwargs):
    items = ["weights=None"] + [f"{k}={v!r}" for k, v in kwargs.items()]
    return ", ".join(items)


def zoo_entries():
    entries = []
    for name, (ctor, kwargs, desc) in TORCHVISION_MODELS.items():
        def build(ctor=ctor, kwargs=kwargs):
            return getattr(torchvision.models, ctor)(weights=None, **kwargs)
        entries.append(ZooEntry(
            name, build,
            example=lambda: torch.randn(1, *IMAGE_SHAPE),
            input_name="input", opset=17,
            description=f"{desc} (torchvision)",
            source=f"torchvision {TORCHVISION_VERSION} {ctor}({_format_kwargs(kwargs)})"))
    entries.append(ZooEntry(
        "bert_base", BertBase,
        example=lambda: torch.randint(0, 30522, (1, SEQ_LEN), dtype=torch.long),
        input_name="input_ids", opset=17,
        description="BERT-base encoder with pooler, sequence length 128 (torch.nn)",
        source="tools/export_zoo.py BertBase (torch.nn)"))
    entries.append(ZooEntry(
        "gpt2_small", GPT2Small,
        example=lambda: torch.randint(0, 50257, (1, SEQ_LEN), dtype=torch.long),
        input_name="input_ids", opset=14,
        description="GPT-2-small decoder with LM head, sequence length 128 (torch.nn)",
        source="tools/export_zoo.py GPT2Small (torch.nn)"))
    return entries


# ---------------------------------------------------------------------------
# Folding of shape computations
# ---------------------------------------------------------------------------
#
# Some torchvision models (shufflenet_v2_x1_0, vit_b_16, swin_t) compute reshape
# targets, paddings, slice bounds, ... at run time from Shape nodes, through ops
# that onnx 1.12's data propagation does not handle (Div, Cast, Where, Range,
# ConstantOfShape, ...), so shape inference cannot give those tensors static
# shapes.  Only the batch dimension is dynamic, so these values are constants
# or multiples of the batch size.  fold_shape_computations() evaluates them
# with a small numpy interpreter, once with batch 2 and once with batch 3, and
# replaces every such value that feeds a "real" node by
#   * a Constant, when it does not depend on the batch size;
#   * for a Reshape target, a Constant with 0 (copy the input dim) or -1 in
#     its batch-dependent entries, where that is unambiguous;
#   * otherwise Concat(Constants, Gather(Shape(data input), 0) [* k]), which
#     onnx's data propagation does handle.
# This repeats until nothing changes; dead nodes are then removed.

_FOLD_BATCHES = (2, 3)
_MAX_FOLD_ELEMENTS = 64
_FOLD_TAG = "_folded"
_MAX_FOLD_ROUNDS = 500
_UNKNOWN = object()


def _np_dtype(onnx_dtype):
    return onnx.mapping.TENSOR_TYPE_TO_NP_TYPE[onnx_dtype]


def _attrs(node):
    return {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}


def _int_div(a, b):
    if np.issubdtype(a.dtype, np.integer):
        q = np.abs(a) // np.abs(b)
        return (q * np.sign(a) * np.sign(b)).astype(a.dtype)
    return (a / b).astype(a.dtype)


def _slice(data, starts, ends, axes=None, steps=None):
    if axes is None:
        axes = range(len(starts))
    if steps is None:
        steps = [1] * len(starts)
    index = [slice(None)] * data.ndim
    for start, end, axis, step in zip(starts, ends, axes, steps):
        index[int(axis)] = slice(int(start), int(end), int(step))
    return data[tuple(index)]


def _constant_value(node):
    attrs = _attrs(node)
    if "value" in attrs:
        return onnx.numpy_helper.to_array(attrs["value"])
    if "value_int" in attrs:
        return np.array(attrs["value_int"], dtype=np.int64)
    if "value_ints" in attrs:
        return np.array(attrs["value_ints"], dtype=np.int64)
    if "value_float" in attrs:
        return np.array(attrs["value_float"], dtype=np.float32)
    if "value_floats" in attrs:
        return np.array(attrs["value_floats"], dtype=np.float32)
    return None


def _evaluate(node, x, shapes):
    """Value(s) of node's outputs, or None when the node is not evaluable.

    x: list of input values (None = unknown); shapes: static shapes by name.
    """
    op, a = node.op_type, _attrs(node)
    if op == "Constant":
        return _constant_value(node)
    if op in ("Shape", "Size"):
        shape = shapes.get(node.input[0])
        if shape is None:
            return None
        if op == "Size":
            return np.array(int(np.prod(shape)), dtype=np.int64)
        start, end = a.get("start", 0), a.get("end", None)
        return np.array(shape[start:end], dtype=np.int64)
    if not x or any(v is None for v, name in zip(x, node.input) if name):
        return None  # an input (optional ones only if given) is not known
    if op == "ConstantOfShape":
        value = a.get("value")
        fill = (onnx.numpy_helper.to_array(value) if value is not None
                else np.zeros(1, dtype=np.float32))
        if int(np.prod(x[0])) > _MAX_FOLD_ELEMENTS:
            return None
        return np.full(tuple(int(d) for d in x[0]), fill.reshape(-1)[0], dtype=fill.dtype)
    binary = {"Add": np.add, "Sub": np.subtract, "Mul": np.multiply,
              "Equal": np.equal, "Less": np.less, "Greater": np.greater,
              "LessOrEqual": np.less_equal, "GreaterOrEqual": np.greater_equal,
              "And": np.logical_and, "Or": np.logical_or}
    unary = {"Neg": np.negative, "Floor": np.floor, "Ceil": np.ceil, "Abs": np.abs,
             "Sqrt": np.sqrt, "Not": np.logical_not, "Identity": lambda v: v}
    if op in binary:
        out = binary[op](x[0], x[1])
        return out.astype(x[0].dtype) if op in ("Add", "Sub", "Mul") else out
    if op in unary:
        return unary[op](x[0]).astype(x[0].dtype) if op != "Not" else unary[op](x[0])
    if op == "Div":
        return _int_div(x[0], x[1])
    if op == "Mod":
        return (np.fmod(x[0], x[1]) if a.get("fmod", 0) else np.mod(x[0], x[1])).astype(x[0].dtype)
    if op == "Pow":
        return np.power(x[0], x[1]).astype(x[0].dtype)
    if op in ("Min", "Max"):
        f = np.minimum if op == "Min" else np.maximum
        out = x[0]
        for v in x[1:]:
            out = f(out, v)
        return out
    if op == "Cast":
        return x[0].astype(_np_dtype(a["to"]))
    if op == "Gather":
        return np.take(x[0], x[1].astype(np.int64), axis=a.get("axis", 0))
    if op == "Unsqueeze":
        axes = x[1] if len(x) > 1 and x[1] is not None else a.get("axes")
        rank = x[0].ndim + len(axes)
        out = x[0]
        for axis in sorted(int(v) % rank for v in axes):
            out = np.expand_dims(out, axis)
        return out
    if op == "Squeeze":
        axes = x[1] if len(x) > 1 and x[1] is not None else a.get("axes")
        if axes is None:
            return np.squeeze(x[0])
        return np.squeeze(x[0], axis=tuple(int(v) % x[0].ndim for v in axes))
    if op == "Concat":
        return np.concatenate(x, axis=a["axis"])
    if op == "Slice":
        if "starts" in a:  # opset < 10
            return _slice(x[0], a["starts"], a["ends"], a.get("axes"))
        return _slice(x[0], x[1], x[2], x[3] if len(x) > 3 else None,
                      x[4] if len(x) > 4 else None)
    if op == "Reshape":
        target = [int(d) for d in x[1]]
        if not a.get("allowzero", 0):
            target = [x[0].shape[i] if d == 0 else d for i, d in enumerate(target)]
        return x[0].reshape(target)
    if op == "Transpose":
        return np.transpose(x[0], a.get("perm"))
    if op == "Expand":
        shape = np.broadcast_shapes(x[0].shape, tuple(int(d) for d in x[1]))
        if int(np.prod(shape)) > _MAX_FOLD_ELEMENTS:
            return None
        return np.broadcast_to(x[0], shape).copy()
    if op == "Where":
        return np.where(x[0], x[1], x[2])
    if op == "Range":
        return np.arange(x[0], x[1], x[2]).astype(x[0].dtype)
    if op == "ReduceProd" and len(x) == 1:
        axes, keep = a.get("axes"), a.get("keepdims", 1)
        return np.prod(x[0], axis=None if axes is None else tuple(axes),
                       keepdims=bool(keep)).astype(x[0].dtype)
    return None


def _static_shapes(model, batch):
    m = copy.deepcopy(model)
    _set_batch(m, batch)
    m = onnx.shape_inference.infer_shapes(m, strict_mode=True, data_prop=True)
    shapes = {}
    for v in list(m.graph.input) + list(m.graph.value_info) + list(m.graph.output):
        t = v.type.tensor_type
        if t.HasField("shape") and all(d.HasField("dim_value") for d in t.shape.dim):
            shapes[v.name] = [d.dim_value for d in t.shape.dim]
    return shapes


def _set_batch(model, batch):
    for value in list(model.graph.input) + list(model.graph.output):
        for dim in value.type.tensor_type.shape.dim:
            if dim.HasField("dim_param") and dim.dim_param == "batch":
                dim.Clear()
                dim.dim_value = batch


def _evaluate_graph(model, batch):
    """(values of the small evaluable tensors, static shapes) for this batch size."""
    shapes = _static_shapes(model, batch)
    values = {}
    for node in model.graph.node:
        inputs = [values.get(name) if name else None for name in node.input]
        try:
            out = _evaluate(node, inputs, shapes)
        except (ValueError, IndexError, TypeError, KeyError):
            out = None
        if out is None or np.asarray(out).size > _MAX_FOLD_ELEMENTS or len(node.output) != 1:
            continue
        values[node.output[0]] = np.asarray(out)
    return values, shapes


def _reshape_target(name, expr, users, shapes_by_batch):
    """Constant Reshape target to replace the batch-dependent target name, or None.

    A single batch-dependent entry becomes -1; several become 0 (copy the input
    dim) where every Reshape's data input has that very dim.  Returns _UNKNOWN
    while a data input's shape is not known yet.
    """
    if not all(u.op_type == "Reshape" and not _attrs(u).get("allowzero", 0)
               and u.input[1] == name and u.input[0] != name for u in users):
        return None
    dynamic = [i for i, (kind, _) in enumerate(expr) if kind == "batch"]
    consts = [v for kind, v in expr if kind == "const"]
    if len(dynamic) == 1 and -1 not in consts:
        return np.array([-1 if kind == "batch" else v for kind, v in expr], dtype=np.int64)
    target = []
    for i, (kind, v) in enumerate(expr):
        if kind == "const":
            target.append(v)
            continue
        for batch, shapes in zip(_FOLD_BATCHES, shapes_by_batch):
            for user in users:
                shape = shapes.get(user.input[0])
                if shape is None:
                    return _UNKNOWN  # may be known after this round's folding
                if i >= len(shape) or shape[i] != v * batch:
                    return None
        target.append(0)
    return np.array(target, dtype=np.int64)


def _batch_expression(v_by_batch):
    """Per entry: ('const', value) or ('batch', k) with value = k * batch; None if neither."""
    (b0, v0), (b1, v1) = v_by_batch
    entries = []
    for e0, e1 in zip(v0.tolist(), v1.tolist()):
        if e0 == e1:
            entries.append(("const", e0))
        elif e0 % b0 == 0 and e1 % b1 == 0 and e0 // b0 == e1 // b1 and e0 // b0 > 0:
            entries.append(("batch", e0 // b0))
        else:
            return None
    return entries


def _const_node(name, output, array):
    return onnx.helper.make_node("Constant", [], [output], name=name,
                                 value=onnx.numpy_helper.from_array(array))


def fold_shape_computations(model, data_input):
    """Replace run-time shape computations by constants; returns the number folded."""
    total = 0
    last_resort = False  # fold deferred Reshape targets the general way
    for _ in range(_MAX_FOLD_ROUNDS):
        graph = model.graph
        results = [_evaluate_graph(model, b) for b in _FOLD_BATCHES]
        by_batch = [values for values, _ in results]
        shapes_by_batch = [shapes for _, shapes in results]
        producer = {o: n for n in graph.node for o in n.output}
        consumers = collections.defaultdict(list)
        for node in graph.node:
            for name in node.input:
                consumers[name].append(node)
        evaluated = set(by_batch[0]) & set(by_batch[1])
        order = {name: i for i, name in enumerate(producer)}
        new_nodes, replace, deferred = [], {}, 0
        for name in sorted(evaluated, key=order.get):
            node = producer[name]
            if node.op_type == "Constant" or _FOLD_TAG in node.name:
                continue  # already constant, or built by an earlier round
            users = [n for n in consumers[name] if not all(o in evaluated for o in n.output)]
            if not users:
                continue
            v0, v1 = by_batch[0][name], by_batch[1][name]
            base = node.name or name
            if v0.shape == v1.shape and np.array_equal(v0, v1):
                new_nodes.append(_const_node(f"{base}_folded", f"{name}_folded", v0))
                replace[name] = f"{name}_folded"
                continue
            if v0.ndim != 1 or v0.shape != v1.shape or v0.dtype != np.int64:
                continue
            expr = _batch_expression(((_FOLD_BATCHES[0], v0), (_FOLD_BATCHES[1], v1)))
            if expr is None:
                continue
            target = _reshape_target(name, expr, users, shapes_by_batch)
            if target is _UNKNOWN and not last_resort:
                deferred += 1
                continue
            if target is not None and target is not _UNKNOWN:
                new_nodes.append(_const_node(f"{base}_folded", f"{name}_folded", target))
                replace[name] = f"{name}_folded"
                continue
            # Concat of constant runs and (batch * k) pieces taken from the data input.
            shape_out, batch_out = f"{base}_folded/shape", f"{base}_folded/batch"
            idx_out = f"{base}_folded/index"
            new_nodes += [onnx.helper.make_node("Shape", [data_input], [shape_out],
                                                name=f"{base}_folded/Shape"),
                          _const_node(f"{base}_folded/Index", idx_out,
                                      np.array([0], dtype=np.int64)),
                          onnx.helper.make_node("Gather", [shape_out, idx_out], [batch_out],
                                                name=f"{base}_folded/Gather", axis=0)]
            pieces, run = [], []
            for i, (kind, v) in enumerate(expr + [("end", 0)]):
                if kind == "const":
                    run.append(v)
                    continue
                if run:
                    out = f"{base}_folded/part{len(pieces)}"
                    new_nodes.append(_const_node(out, out, np.array(run, dtype=np.int64)))
                    pieces.append(out)
                    run = []
                if kind == "batch":
                    if v == 1:
                        pieces.append(batch_out)
                    else:
                        k_out, out = f"{base}_folded/k{i}", f"{base}_folded/mul{i}"
                        new_nodes += [_const_node(k_out, k_out, np.array([v], dtype=np.int64)),
                                      onnx.helper.make_node("Mul", [batch_out, k_out], [out],
                                                            name=out)]
                        pieces.append(out)
            new_nodes.append(onnx.helper.make_node("Concat", pieces, [f"{name}_folded"],
                                                   name=f"{base}_folded", axis=0))
            replace[name] = f"{name}_folded"
        if not replace:
            if deferred and not last_resort:
                last_resort = True
                continue
            break
        last_resort = False
        total += len(replace)
        # Insert the new nodes at the front (they only depend on the data input),
        # rewire the consumers and drop what is no longer used.
        nodes = new_nodes + [n for n in graph.node]
        for node in nodes:
            if all(o in evaluated for o in node.output if o):
                continue  # an evaluated node keeps its (soon dead) inputs
            for i, name in enumerate(node.input):
                if name in replace:
                    node.input[i] = replace[name]
        del graph.node[:]
        graph.node.extend(nodes)
        remove_dead_nodes(model)
    else:
        raise ZooError(f"shape folding did not converge in {_MAX_FOLD_ROUNDS} rounds")
    return total


def remove_dead_nodes(model):
    """Drop nodes whose outputs nothing uses, then graph inputs nothing uses."""
    graph = model.graph
    while True:
        used = {o.name for o in graph.output}
        for node in graph.node:
            used.update(node.input)
        keep = [n for n in graph.node if any(o in used for o in n.output if o)]
        if len(keep) == len(graph.node):
            break
        del graph.node[:]
        graph.node.extend(keep)
    used = {name for n in graph.node for name in n.input}
    keep_inputs = [i for i in graph.input if i.name in used]
    del graph.input[:]
    graph.input.extend(keep_inputs)


# ---------------------------------------------------------------------------
# Export, post-processing and validation
# ---------------------------------------------------------------------------


class ZooError(RuntimeError):
    pass


@torch.no_grad()
def randomise_state(model):
    """Make parameter values distinct and BatchNorm statistics non-trivial.

    Identical parameter values would be de-duplicated by the exporter into
    Identity nodes, and default BatchNorm statistics invite simplification.
    """
    for tensor in list(model.parameters()) + list(model.buffers()):
        if tensor.is_floating_point():
            tensor.add_(torch.randn_like(tensor) * 1e-3)
    for module in model.modules():
        if isinstance(module, nn.modules.batchnorm._BatchNorm):
            module.running_mean.normal_()
            module.running_var.uniform_(0.5, 1.5)
            if module.affine:
                module.weight.uniform_(0.5, 1.5)
                module.bias.normal_(0.0, 0.1)


def export_model(entry, path, export_params=False):
    """Export entry to path; returns the output shape torch computes (batch 1)."""
    torch.manual_seed(0)
    model = entry.build()
    randomise_state(model)
    model.eval()
    example = entry.example()
    with torch.no_grad():
        output_shape = list(model(example).shape)
    torch.onnx.export(
        model, (example,), path,
        export_params=export_params,
        training=torch.onnx.TrainingMode.PRESERVE,
        do_constant_folding=True,
        input_names=[entry.input_name],
        output_names=["output"],
        dynamic_axes={entry.input_name: {0: "batch"}, "output": {0: "batch"}},
        opset_version=entry.opset)
    return output_shape


def fix_output_shapes(model):
    """Give graph outputs static dims (or "batch") from shape inference.

    The exporter sometimes leaves a symbolic dim it could not resolve itself.
    """
    shapes = [_static_shapes(model, b) for b in _FOLD_BATCHES]
    for out in model.graph.output:
        s0, s1 = shapes[0].get(out.name), shapes[1].get(out.name)
        if s0 is None or s1 is None or len(s0) != len(s1):
            raise ZooError(f"output {out.name}: shape cannot be inferred")
        dims = out.type.tensor_type.shape.dim
        del dims[:]
        for d0, d1 in zip(s0, s1):
            dim = dims.add()
            if d0 == d1:
                dim.dim_value = d0
            elif (d0, d1) == _FOLD_BATCHES:
                dim.dim_param = "batch"
            else:
                raise ZooError(f"output {out.name}: unexpected dims {s0} / {s1}")


def remove_noop_dropouts(model):
    """Remove Dropout nodes that are the identity (ratio 0 or not training).

    torchvision 0.14's swin_t calls F.dropout(p=0.0) inside its attention
    without passing the module's training flag, so those Dropouts export in
    training mode (with ratio 0).  They compute the identity and are removed.
    """
    graph = model.graph
    constants = {n.output[0]: _constant_value(n) for n in graph.node if n.op_type == "Constant"}
    used = {name for n in graph.node for name in n.input} | {o.name for o in graph.output}
    replace, keep = {}, []
    for node in graph.node:
        if node.op_type == "Dropout":
            ratio = constants.get(node.input[1]) if len(node.input) > 1 and node.input[1] else None
            training = (constants.get(node.input[2])
                        if len(node.input) > 2 and node.input[2] else np.array(False))
            used_mask = len(node.output) > 1 and node.output[1] in used
            noop = ((ratio is not None and float(ratio) == 0.0)
                    or (training is not None and not bool(training)))
            if noop and not used_mask:
                replace[node.output[0]] = node.input[0]
                continue
        keep.append(node)
    for node in keep:
        for i, name in enumerate(node.input):
            while name in replace:
                name = replace[name]
            node.input[i] = name
    for out in graph.output:
        if out.name in replace:
            raise ZooError(f"graph output {out.name} comes straight from a Dropout")
    del graph.node[:]
    graph.node.extend(keep)
    return len(replace)


def share_constants(model):
    """Keep one Constant node per distinct value and share it.

    The exporter emits a separate copy of a constant for every use (e.g. the
    GPT-2 causal mask once per block, 16 KB each, or the same Slice steps and
    Unsqueeze axes over and over).
    """
    graph = model.graph
    first, replace = {}, {}
    keep = []
    for node in graph.node:
        if node.op_type == "Constant" and node.attribute[0].name == "value":
            tensor = node.attribute[0].t
            unnamed = onnx.TensorProto()
            unnamed.CopyFrom(tensor)
            unnamed.name = ""
            key = unnamed.SerializeToString(deterministic=True)
            if key in first:
                replace[node.output[0]] = first[key]
                continue
            first[key] = node.output[0]
        keep.append(node)
    for node in keep:
        for i, name in enumerate(node.input):
            if name in replace:
                node.input[i] = replace[name]
    del graph.node[:]
    graph.node.extend(keep)
    return len(replace)


def postprocess(entry, path):
    """Fold shape computations, tidy up and add metadata; returns (model, notes)."""
    model = onnx.load(path)
    notes = []
    model.doc_string = ""
    model.graph.doc_string = ""
    for node in model.graph.node:
        node.doc_string = ""
    del model.graph.value_info[:]
    for value in list(model.graph.input) + list(model.graph.output):
        value.doc_string = ""
    dropouts = remove_noop_dropouts(model)
    if dropouts:
        notes.append(f"{dropouts} no-op Dropout nodes removed")
    folded = fold_shape_computations(model, entry.input_name)
    if folded:
        notes.append(f"{folded} shape computations folded")
    shared = share_constants(model)
    if shared:
        notes.append(f"{shared} duplicate constants shared")
    remove_dead_nodes(model)
    fix_output_shapes(model)
    del model.metadata_props[:]
    for key, value in (("nnergy.description", entry.description),
                       ("nnergy.source", entry.source),
                       ("nnergy.data_inputs", entry.input_name)):
        prop = model.metadata_props.add()
        prop.key = key
        prop.value = value
    onnx.save(model, path)
    return model, notes


def _is_static(value_info):
    t = value_info.type
    if not t.HasField("tensor_type") or not t.tensor_type.HasField("shape"):
        return False
    return all(d.HasField("dim_value") for d in t.tensor_type.shape.dim)


def validate(entry, model, path, torch_shape):
    """Raise ZooError (or onnx's own error) unless the file is usable; returns (ops, size)."""
    onnx.checker.check_model(model)

    if len(model.graph.initializer) != 0:
        raise ZooError(f"{entry.name}: has {len(model.graph.initializer)} initializers")
    ops = collections.Counter(n.op_type for n in model.graph.node)
    if ops.get("Dropout"):
        raise ZooError(f"{entry.name}: {ops['Dropout']} Dropout nodes left")
    if ops.get("Identity"):
        raise ZooError(f"{entry.name}: {ops['Identity']} Identity nodes "
                       f"(de-duplicated parameters?)")
    if entry.name == "resnet50" and (ops.get("Conv") != 53 or ops.get("BatchNormalization") != 53):
        raise ZooError(f"resnet50: expected 53 Conv and 53 BatchNormalization, got "
                       f"{ops.get('Conv')} and {ops.get('BatchNormalization')}")
    graph_inputs = {i.name for i in model.graph.input}
    if entry.input_name not in graph_inputs:
        raise ZooError(f"{entry.name}: data input {entry.input_name!r} missing")

    # Fix the batch dimension, then require static shapes everywhere.
    fixed = copy.deepcopy(model)
    for value in list(fixed.graph.input) + list(fixed.graph.output):
        for dim in value.type.tensor_type.shape.dim:
            if dim.HasField("dim_param") and dim.dim_param != "batch":
                raise ZooError(f"{entry.name}: unexpected symbolic dim {dim.dim_param!r} "
                               f"on {value.name}")
    _set_batch(fixed, 2)
    inferred = onnx.shape_inference.infer_shapes(fixed, strict_mode=True, data_prop=True)
    known = {}
    for value in (list(inferred.graph.input) + list(inferred.graph.output)
                  + list(inferred.graph.value_info)):
        known[value.name] = value
    consumed = {name for n in inferred.graph.node for name in n.input}
    graph_outputs = {o.name for o in inferred.graph.output}
    missing = []
    for node in inferred.graph.node:
        for out in node.output:
            if not out:
                continue
            if out not in consumed and out not in graph_outputs:
                continue
            if out not in known or not _is_static(known[out]):
                missing.append(f"{node.op_type} {node.name} -> {out}")
    if missing:
        raise ZooError(f"{entry.name}: {len(missing)} node outputs without a static shape, "
                       f"e.g. " + "; ".join(missing[:5]))
    for out in inferred.graph.output:
        if not _is_static(out):
            raise ZooError(f"{entry.name}: graph output {out.name} has no static shape")
    output_dims = model.graph.output[0].type.tensor_type.shape.dim
    declared = [d.dim_param or d.dim_value for d in output_dims]
    if declared != ["batch"] + torch_shape[1:]:
        raise ZooError(f"{entry.name}: output shape {declared}, torch gives {torch_shape}")

    size = os.path.getsize(path)
    if size > MAX_FILE_BYTES:
        raise ZooError(f"{entry.name}: file is {size} bytes (limit {MAX_FILE_BYTES})")
    return ops, size


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=os.path.join("data", "zoo"),
                        help="output directory (default: data/zoo)")
    parser.add_argument("--only", default="",
                        help="comma-separated model names to export (default: all)")
    args = parser.parse_args(argv)

    entries = zoo_entries()
    if args.only:
        wanted = [n.strip() for n in args.only.split(",") if n.strip()]
        known_names = {e.name for e in entries}
        unknown = [n for n in wanted if n not in known_names]
        if unknown:
            parser.error(f"unknown model(s): {', '.join(unknown)}; "
                         f"known: {', '.join(sorted(known_names))}")
        entries = [e for e in entries if e.name in wanted]

    os.makedirs(args.out, exist_ok=True)
    failures = []
    for entry in entries:
        path = os.path.join(args.out, f"{entry.name}.onnx")
        try:
            torch_shape = export_model(entry, path)
            model, notes = postprocess(entry, path)
            ops, size = validate(entry, model, path, torch_shape)
        except Exception as exc:  # report every failing model, then exit non-zero
            failures.append(entry.name)
            print(f"FAILED {entry.name}: {exc}", file=sys.stderr)
            if os.path.exists(path):
                os.remove(path)  # leave no unusable file behind
            continue
        top = ", ".join(f"{op} {count}" for op, count in ops.most_common(6))
        print(f"{entry.name:20s} opset {entry.opset}  {len(model.graph.node):5d} nodes  "
              f"{size / 1024:7.1f} KB  [{top}]", flush=True)
        for note in notes:
            print(f"{'':20s} note: {note}", flush=True)

    if failures:
        print(f"export failed for: {', '.join(failures)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
