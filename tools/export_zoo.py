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
``input_ids`` (int64, ``[batch, seq]``).  Dimension 0 of the data input and of
the output is the symbolic dimension ``batch``; the transformers' sequence
length is the symbolic dimension ``seq`` (also gpt2_small's output dimension
1), with the default 128 written to the ``nnergy.default_dims`` metadata
property (nnergy binds it when the user gives no ``--dim seq=N``).

How to run
----------
::

    /usr/bin/python3 tools/export_zoo.py [--out data/zoo] [--only name1,name2]
                                         [--nnergy build/ci/apps/nnergy/nnergy]

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
* The two hand-written models take batch and sequence length from their
  input at run time (``x.size(0)``, ``x.size(1)`` in every reshape), so the
  exported graph computes its reshape targets with Shape->Gather->Concat
  chains and the sequence length stays symbolic.  Their position ids and
  (BERT) all-zero token-type ids are non-persistent buffers of length
  max_positions (512 for BERT, 1024 for GPT-2) sliced to the sequence length,
  so they are traced as small constants rather than graph inputs.  GPT-2's
  causal mask is computed from the sliced position ids (key position greater
  than query position), once for all blocks; a stored [1024, 1024] mask would
  be a 1 MB constant.
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
* identical Constant nodes are merged (the exporter writes one copy per use,
  e.g. the same Slice bounds and Unsqueeze axes over and over);
* the graph output shape is written in full from the shape torch computes,
  with the symbolic dimensions of the export (the exporter may leave a
  dimension it could not resolve under a generated name);
* the metadata properties ``nnergy.description``, ``nnergy.source``,
  ``nnergy.data_inputs`` and, for the transformers, ``nnergy.default_dims``
  (``seq=128``) are added.

Shape arithmetic (Shape, Gather, Concat, Range, Where, ConstantOfShape, ...
computing reshape targets, pads and slice bounds) is left in the graph:
nnergy's importer evaluates it into constants once the dimensions are bound.
Earlier versions of this script folded it here, for the batch dimension only;
the zoo files they wrote (all but bert_base and gpt2_small) keep that folding.

Validation
----------
The script exits with an error if any check fails for any model:

* ``onnx.checker.check_model``;
* the only symbolic dimensions are ``batch`` and those in
  ``nnergy.default_dims``; with ``batch`` set to 2 and the others to their
  defaults, strict shape inference with data propagation
  (``onnx.shape_inference.infer_shapes(m, strict_mode=True, data_prop=True)``)
  succeeds.  It cannot give every tensor a static shape, as onnx 1.12 does
  not follow all shape arithmetic; that is checked by nnergy itself: with
  ``--nnergy PATH`` every file must import and predict with that binary
  (batch 2, default and doubled symbolic dimensions), and the C++ test
  ``tests/graph/zoo_test.cc`` requires static shapes everywhere;
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
import subprocess
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
    def __init__(self, vocab_size, hidden, max_positions, type_vocab_size, dropout):
        super().__init__()
        # Index tensors for the longest sequence (all-zero token types), sliced to the
        # actual length at run time.  They are not persistent, so they are traced as
        # small constants (4 KB each), not graph inputs.
        self.register_buffer("position_ids", torch.arange(max_positions).unsqueeze(0),
                             persistent=False)
        self.register_buffer("token_type_ids", torch.zeros(1, max_positions, dtype=torch.long),
                             persistent=False)
        self.word_embeddings = nn.Embedding(vocab_size, hidden)
        self.position_embeddings = nn.Embedding(max_positions, hidden)
        self.token_type_embeddings = nn.Embedding(type_vocab_size, hidden)
        self.LayerNorm = nn.LayerNorm(hidden, eps=1e-12)
        self.dropout = nn.Dropout(dropout)

    def forward(self, input_ids):
        seq = input_ids.size(1)
        x = (self.word_embeddings(input_ids)
             + self.position_embeddings(self.position_ids[:, :seq])
             + self.token_type_embeddings(self.token_type_ids[:, :seq]))
        return self.dropout(self.LayerNorm(x))


class BertSelfAttention(nn.Module):
    def __init__(self, hidden, heads, dropout):
        super().__init__()
        self.heads = heads
        self.head_dim = hidden // heads
        self.query = nn.Linear(hidden, hidden)
        self.key = nn.Linear(hidden, hidden)
        self.value = nn.Linear(hidden, hidden)
        self.dropout = nn.Dropout(dropout)

    def _split_heads(self, x):
        # [B, S, H] -> [B, heads, S, head_dim], batch and sequence taken from x.
        return x.view(x.size(0), x.size(1), self.heads, self.head_dim).transpose(1, 2)

    def forward(self, x):
        q = self._split_heads(self.query(x))
        k = self._split_heads(self.key(x))
        v = self._split_heads(self.value(x))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_dim)
        probs = self.dropout(torch.softmax(scores, dim=-1))
        context = torch.matmul(probs, v).transpose(1, 2)
        return context.reshape(x.size(0), x.size(1), self.heads * self.head_dim)


class BertSelfOutput(nn.Module):
    def __init__(self, hidden, dropout):
        super().__init__()
        self.dense = nn.Linear(hidden, hidden)
        self.dropout = nn.Dropout(dropout)
        self.LayerNorm = nn.LayerNorm(hidden, eps=1e-12)

    def forward(self, x, residual):
        return self.LayerNorm(self.dropout(self.dense(x)) + residual)


class BertAttention(nn.Module):
    def __init__(self, hidden, heads, dropout):
        super().__init__()
        self.self = BertSelfAttention(hidden, heads, dropout)
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
    def __init__(self, hidden, heads, ffn, dropout):
        super().__init__()
        self.attention = BertAttention(hidden, heads, dropout)
        self.intermediate = BertIntermediate(hidden, ffn)
        self.output = BertOutput(ffn, hidden, dropout)

    def forward(self, x):
        x = self.attention(x)
        return self.output(self.intermediate(x), x)


class BertEncoder(nn.Module):
    def __init__(self, layers, hidden, heads, ffn, dropout):
        super().__init__()
        self.layer = nn.ModuleList(
            BertLayer(hidden, heads, ffn, dropout) for _ in range(layers))

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
                 max_positions=512, type_vocab_size=2, dropout=0.1):
        super().__init__()
        self.embeddings = BertEmbeddings(vocab_size, hidden, max_positions,
                                         type_vocab_size, dropout)
        self.encoder = BertEncoder(layers, hidden, heads, ffn, dropout)
        self.pooler = BertPooler(hidden)

    def forward(self, input_ids):
        return self.pooler(self.encoder(self.embeddings(input_ids)))


# ---------------------------------------------------------------------------
# GPT-2-small decoder
# ---------------------------------------------------------------------------


class GPT2Attention(nn.Module):
    def __init__(self, hidden, heads, dropout):
        super().__init__()
        self.hidden = hidden
        self.heads = heads
        self.head_dim = hidden // heads
        self.c_attn = nn.Linear(hidden, 3 * hidden)
        self.c_proj = nn.Linear(hidden, hidden)
        self.attn_dropout = nn.Dropout(dropout)
        self.resid_dropout = nn.Dropout(dropout)

    def _split_heads(self, x):
        return x.view(x.size(0), x.size(1), self.heads, self.head_dim).transpose(1, 2)

    def forward(self, x, causal_mask):
        q, k, v = self.c_attn(x).split(self.hidden, dim=2)
        q, k, v = self._split_heads(q), self._split_heads(k), self._split_heads(v)
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_dim)
        scores = scores.masked_fill(causal_mask, float("-inf"))
        probs = self.attn_dropout(torch.softmax(scores, dim=-1))
        context = torch.matmul(probs, v).transpose(1, 2)
        context = context.reshape(x.size(0), x.size(1), self.hidden)
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
    def __init__(self, hidden, heads, ffn, dropout):
        super().__init__()
        self.ln_1 = nn.LayerNorm(hidden, eps=1e-5)
        self.attn = GPT2Attention(hidden, heads, dropout)
        self.ln_2 = nn.LayerNorm(hidden, eps=1e-5)
        self.mlp = GPT2MLP(hidden, ffn, dropout)

    def forward(self, x, causal_mask):
        x = x + self.attn(self.ln_1(x), causal_mask)
        return x + self.mlp(self.ln_2(x))


class GPT2Small(nn.Module):
    """GPT-2-small decoder (12 blocks, H=768, 12 heads, FFN 3072) with LM head.

    The LM head is untied from the token embedding.  The output is the logits
    tensor [batch, seq, 50257].
    """

    def __init__(self, vocab_size=50257, hidden=768, layers=12, heads=12, ffn=3072,
                 max_positions=1024, dropout=0.1):
        super().__init__()
        self.wte = nn.Embedding(vocab_size, hidden)
        self.wpe = nn.Embedding(max_positions, hidden)
        self.drop = nn.Dropout(dropout)
        self.h = nn.ModuleList(
            GPT2Block(hidden, heads, ffn, dropout) for _ in range(layers))
        self.ln_f = nn.LayerNorm(hidden, eps=1e-5)
        self.lm_head = nn.Linear(hidden, vocab_size, bias=False)
        # Position ids for the longest sequence, sliced to the actual length at run
        # time.  Not persistent, so traced as a small constant (8 KB), not a graph
        # input.
        self.register_buffer("position_ids", torch.arange(max_positions).unsqueeze(0),
                             persistent=False)

    def forward(self, input_ids):
        seq = input_ids.size(1)
        positions = self.position_ids[:, :seq]
        # True above the diagonal (key position after query position: future
        # tokens), [1, 1, seq, seq], computed once and shared by all blocks.  It is
        # derived from the position ids rather than sliced from a stored
        # [max_positions, max_positions] mask, which would be a 1 MB constant.
        causal_mask = (positions.unsqueeze(2) < positions.unsqueeze(1)).unsqueeze(1)
        x = self.drop(self.wte(input_ids) + self.wpe(positions))
        for block in self.h:
            x = block(x, causal_mask)
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
    """One zoo model.

    input_axes / output_axes: symbolic dimensions {axis: name} of the data input
    and of the output (dynamic_axes of the export); default_dims: the value of
    each symbolic dimension other than batch, written to the file's
    nnergy.default_dims metadata (for the transformers, seq = SEQ_LEN, the
    length of the example input traced by the export).
    """

    def __init__(self, name, build, example, input_name, opset, description, source,
                 input_axes=None, output_axes=None, default_dims=None):
        self.name = name
        self.build = build
        self.example = example
        self.input_name = input_name
        self.opset = opset
        self.description = description
        self.source = source
        self.input_axes = input_axes or {0: "batch"}
        self.output_axes = output_axes or {0: "batch"}
        self.default_dims = default_dims or {}


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
    token_axes = {0: "batch", 1: "seq"}
    entries.append(ZooEntry(
        "bert_base", BertBase,
        example=lambda: torch.randint(0, 30522, (1, SEQ_LEN), dtype=torch.long),
        input_name="input_ids", opset=17,
        description="BERT-base encoder with pooler, symbolic sequence length seq "
                    "(default 128) (torch.nn)",
        source="tools/export_zoo.py BertBase (torch.nn)",
        input_axes=token_axes, output_axes={0: "batch"}, default_dims={"seq": SEQ_LEN}))
    entries.append(ZooEntry(
        "gpt2_small", GPT2Small,
        example=lambda: torch.randint(0, 50257, (1, SEQ_LEN), dtype=torch.long),
        input_name="input_ids", opset=14,
        description="GPT-2-small decoder with LM head, symbolic sequence length seq "
                    "(default 128) (torch.nn)",
        source="tools/export_zoo.py GPT2Small (torch.nn)",
        input_axes=token_axes, output_axes=token_axes, default_dims={"seq": SEQ_LEN}))
    return entries


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
        dynamic_axes={entry.input_name: dict(entry.input_axes),
                      "output": dict(entry.output_axes)},
        opset_version=entry.opset)
    return output_shape


def write_output_shapes(model, entry, torch_shape):
    """Write the graph output's shape in full: torch's shape, symbolic where dynamic.

    The exporter may leave a dimension it could not resolve as an unnamed or
    generated symbol.
    """
    if len(model.graph.output) != 1:
        raise ZooError(f"{entry.name}: expected one graph output, got {len(model.graph.output)}")
    dims = model.graph.output[0].type.tensor_type.shape.dim
    del dims[:]
    for axis, size in enumerate(torch_shape):
        dim = dims.add()
        if axis in entry.output_axes:
            dim.dim_param = entry.output_axes[axis]
        else:
            dim.dim_value = size


def _constant_value(node):
    """Value of a Constant node as a numpy array, or None."""
    attrs = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
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


def postprocess(entry, path, torch_shape):
    """Tidy up, write the output shape and add metadata; returns (model, notes)."""
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
    shared = share_constants(model)
    if shared:
        notes.append(f"{shared} duplicate constants shared")
    remove_dead_nodes(model)
    write_output_shapes(model, entry, torch_shape)
    del model.metadata_props[:]
    metadata = [("nnergy.description", entry.description),
                ("nnergy.source", entry.source),
                ("nnergy.data_inputs", entry.input_name)]
    if entry.default_dims:
        metadata.append(("nnergy.default_dims",
                         ",".join(f"{k}={v}" for k, v in entry.default_dims.items())))
    for key, value in metadata:
        prop = model.metadata_props.add()
        prop.key = key
        prop.value = value
    onnx.save(model, path)
    return model, notes


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

    # Only the declared symbolic dimensions; bound to batch 2 and their defaults,
    # strict shape inference must succeed.  It cannot give every tensor a static
    # shape: onnx 1.12's data propagation does not follow all shape arithmetic
    # (Range, Where, Cast, ConstantOfShape, a Slice with computed bounds, ...).
    # nnergy's importer folds that arithmetic itself; --nnergy checks the file
    # with it.
    symbols = {"batch": 2, **entry.default_dims}
    fixed = copy.deepcopy(model)
    for value in list(fixed.graph.input) + list(fixed.graph.output):
        for dim in value.type.tensor_type.shape.dim:
            if not dim.HasField("dim_param"):
                continue
            if dim.dim_param not in symbols:
                raise ZooError(f"{entry.name}: unexpected symbolic dim {dim.dim_param!r} "
                               f"on {value.name}")
            size = symbols[dim.dim_param]
            dim.Clear()
            dim.dim_value = size
    onnx.shape_inference.infer_shapes(fixed, strict_mode=True, data_prop=True)
    output_dims = model.graph.output[0].type.tensor_type.shape.dim
    declared = [d.dim_param or d.dim_value for d in output_dims]
    expected = [entry.output_axes.get(axis, size) for axis, size in enumerate(torch_shape)]
    if declared != expected:
        raise ZooError(f"{entry.name}: output shape {declared}, torch gives {torch_shape}")

    size = os.path.getsize(path)
    if size > MAX_FILE_BYTES:
        raise ZooError(f"{entry.name}: file is {size} bytes (limit {MAX_FILE_BYTES})")
    return ops, size


def check_with_nnergy(entry, path, nnergy):
    """Import path with the nnergy binary at batch 2, at the default dims and at twice them."""
    runs = [[]]
    if entry.default_dims:
        runs.append([arg for k, v in entry.default_dims.items() for arg in ("--dim", f"{k}={2 * v}")])
    for extra in runs:
        cmd = [nnergy, "predict", path, "--batch", "2", "--json"] + extra
        result = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if result.returncode != 0:
            raise ZooError(f"{entry.name}: {' '.join(cmd)} failed: "
                           f"{(result.stderr or result.stdout).strip()}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=os.path.join("data", "zoo"),
                        help="output directory (default: data/zoo)")
    parser.add_argument("--only", default="",
                        help="comma-separated model names to export (default: all)")
    parser.add_argument("--nnergy", default="",
                        help="path of a built nnergy binary: every exported file must then "
                             "import and predict with it (batch 2, default and doubled "
                             "symbolic dimensions)")
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
            model, notes = postprocess(entry, path, torch_shape)
            ops, size = validate(entry, model, path, torch_shape)
            if args.nnergy:
                check_with_nnergy(entry, path, args.nnergy)
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
