#!/usr/bin/python3
"""Export a second user-style ONNX corpus (precision, layouts, detection, GQA, opsets).

Purpose
-------
A second corpus next to ``tools/export_user_models.py``'s: exports that users make,
that the first corpus does not cover and that nnergy's importer did not handle when
this corpus was written, each with the answer counted by PyTorch, so that the
importer can be fixed against fixtures.  It writes
``tests/fixtures/user_exports_modern/*.onnx`` and ``manifest.json`` in the format of
``tests/fixtures/user_exports/manifest.json`` (same fields per model and per case),
with these additions per model:

* ``precision``: floating type of the file's parameters and activations
  (``fp32``, ``fp16``, ``bf16``) and ``precision_method``: how the file was made.
* ``batch_axes`` (data input name -> axis of the batch, ``null`` where an input has
  none), ``batch_axis`` (the common axis, ``null`` if the inputs disagree or have
  none), ``layout`` and ``exported_batch``.
* ``input_shapes_at_export``: every data input's shape (``input_shape_at_export``
  keeps the first input's, as in the first corpus).
* ``onnx_ops_in_subgraphs``: operators inside Loop/If bodies (``onnx_ops`` counts the
  main graph only, as in the first corpus).
* ``onnx_checker`` (the ONNX checker on the file as exported, before stripping; the
  stripped file fails it only because its external data file does not exist) and
  ``onnx_strict_shape_inference`` (``infer_shapes(strict_mode=True, data_prop=True)``
  on the stripped file, every graph output typed, as nnergy runs it), with
  ``onnx_strict_shape_inference_error`` (first line) when it fails.
* ``batch_folded_into_constants`` for static exports whose batch the exporter wrote
  into literal shapes (where, and the literal Reshape targets with their counts); the
  MACs of the other batches are the model's at that batch all the same.
* Detection models: ``data_dependent`` (see below), and per case
  ``macs_at_constant_counts`` and ``data_dependent_run``.
* ``not_produced`` at manifest level: exports torch 1.13 refuses, with the error.

What is exported
----------------
1. Precision: torchvision resnet18 (dynamic batch) and the first corpus's GPT-style
   block (dynamic batch and seq) in bf16 (``model.to(torch.bfloat16)``, exported
   directly) and fp16.  torch 1.13 on the CPU has no Half kernels for Conv2d or
   LayerNorm, so the direct ``model.half()`` export fails while tracing; the fp16
   file is then the fp32 export with its types converted to FLOAT16
   (``to_float16``: initializers, graph inputs/outputs/value_info, Constant and
   ConstantOfShape values, Cast targets, recursively in subgraphs), as a GPU export
   gives it.  ``precision_method`` records which way each file was made (and the
   error of the direct attempt).  MACs do not depend on the precision and are
   counted on the fp32 model.
2. Sequence-first static layouts (PyTorch's default ``batch_first=False``, no
   ``dynamic_axes``): ``nn.Transformer`` (d_model 512, 8 heads, 3+3 layers, source
   64 x batch 8, target 32 x batch 8, called as the PyTorch docs do:
   ``model(src, tgt)``), ``nn.TransformerEncoder`` (S 64, N 4) and the LSTM language
   model of pytorch/examples' word_language_model (2 layers, 200 units, 33278-word
   vocabulary, bptt 35 x batch 20, exported as its ``export_onnx`` does: token ids
   plus the (h0, c0) state).  The batch is axis 1 of every data input; MACs at the
   exported batch and two others.
3. Detection and segmentation (torchvision, ``weights=None, weights_backbone=None``,
   ``model.eval()``, opset 11, a list of one [3, H, W] image as torchvision's own
   ONNX tests export them, static image size): fasterrcnn_mobilenet_v3_large_320_fpn,
   fasterrcnn_resnet50_fpn, ssdlite320_mobilenet_v3_large, retinanet_resnet50_fpn,
   and deeplabv3_mobilenet_v3_large ('out' of the returned dict, [1, 3, 520, 520]).
   A detection file takes one image and has no batch axis; the case of batch N is the
   model run on N images of the same size (N runs of the file).
4. Grouped-query attention as Llama code writes it: a decoder block with RMSNorm,
   rotary embeddings (rotate_half, cos/sin tables sliced to the sequence), q/k/v/o
   projections with 8 query and 2 key/value heads, a SwiGLU MLP and a causal mask
   from ``torch.triu``; the KV heads repeated with ``repeat_interleave(4, dim=1)``
   (dynamic axes: a Loop over SplitToSequence/SequenceInsert/ConcatFromSequence) or
   with Hugging Face's ``repeat_kv`` (expand + reshape); each with dynamic batch and
   seq and with static shapes.
5. Opsets 11 to 17: resnet18 (static batch 1) and the GPT-style block (dynamic
   batch and seq) at every opset torch 1.13 exports; the block's ``torch.triu`` has
   no symbolic below opset 14, so opsets 11-13 of it are listed under
   ``not_produced``.  torch 1.13 has no opset 18 (``Unsupported ONNX opset version:
   18``).

Every model is built with ``weights=None`` or ``torch.manual_seed(0)`` and perturbed
as in the first corpus; nothing is downloaded.  Exports use ``torch.onnx.export``'s
defaults except for the input/output names and what the manifest's ``call`` shows.

How MACs are counted
--------------------
As in the first corpus (``export_user_models.count_macs``: a TorchDispatchMode over
the matrix operations).  The LSTM language model: the LSTM's closed form plus the
decoder's S x N x hidden x vocabulary, which must equal the dispatch count of the
same run (``closed-form+dispatch``).

Detection models (``data_dependent``): the number of boxes that reach a later stage
depends on the data (NonZero, NonMaxSuppression, TopK), so the file alone does not
fix the work.  The model's own constants fix the maximum counts: Faster R-CNN's
``rpn.post_nms_top_n()`` proposals per image reach the box head, and at most
``roi_heads.detections_per_img`` detections are returned; SSDlite and RetinaNet keep
``topk_candidates`` per class / level before NMS and ``detections_per_img`` after.
The backbone, the FPN and the RPN / SSD / RetinaNet heads run on every anchor and do
not depend on these counts, and no matrix operation follows the selection in SSDlite
and RetinaNet, so their ``macs_at_constant_counts`` equal ``macs``.  Faster R-CNN's
box head (TwoMLPHead and FastRCNNPredictor) runs once per proposal: its MACs are
measured with the dispatch counter between forward hooks on ``roi_heads`` for the
run's proposals, divided by their number (which must give the closed form
sum(in x out) of its Linear layers exactly), and ``macs_at_constant_counts`` =
macs - box head MACs of the run + MACs per proposal x post_nms_top_n x images.
The run's counts (proposals and detections per image) come from the counting run of
the same model on the same image as the export.

How to run
----------
::

    /usr/bin/python3 tools/export_user_models_modern.py [--out tests/fixtures/user_exports_modern]
        [--only a,b] [--nnergy build/ci/apps/nnergy/nnergy]

Same Debian packages as ``export_user_models.py`` (torch 1.13, torchvision 0.14,
onnx 1.12, ``/usr/bin/python3``); the detection models make it take several
minutes.  With ``--only`` the manifest keeps the entries of the other files.  With
``--nnergy PATH`` it also runs ``PATH predict FILE --batch N --json`` on every case
and prints what nnergy does (exit code, first error line or its MACs against the
manifest's); the manifest does not record it.
"""

import argparse
import collections
import dataclasses
import json
import math
import os
import subprocess
import sys
import typing
import warnings

import numpy as np
import onnx
import onnx.numpy_helper
import onnx.shape_inference
import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision
from torchvision.models import detection

from export_user_models import (  # noqa: E402  (tools/ is the script directory)
    BATCH_DYN, BATCH_SEQ_DYN, DEFAULT_OPSET, FLOAT_TYPES, STRIPPED_LOCATION, TORCH_VERSION,
    TORCHVISION_VERSION, GPTBlock, MacCounter, SegmentationOut, _numel, bn_statistics,
    check_shapes, count_macs, expected_parameters, input_dims, perturb, rnn_closed_form,
    strip_weights, tv)

warnings.filterwarnings("ignore", category=UserWarning)
warnings.filterwarnings("ignore", category=torch.jit.TracerWarning)

SIZE_WARN_BYTES = 450 * 1024
TOTAL_LIMIT_BYTES = 3 * 1024 * 1024
MAX_OPSET_TORCH = 17  # torch 1.13: "Unsupported ONNX opset version: 18"


# ---------------------------------------------------------------------------
# Hand-written models
# ---------------------------------------------------------------------------


class SeqFirstEncoder(nn.Module):
    """nn.TransformerEncoder, 2 layers, d_model 256, 4 heads, FFN 2048, batch_first=False."""

    def __init__(self, dim=256, heads=4, layers=2):
        super().__init__()
        self.encoder = nn.TransformerEncoder(nn.TransformerEncoderLayer(dim, heads), layers)

    def forward(self, x):
        return self.encoder(x)


class WordLanguageModel(nn.Module):
    """pytorch/examples word_language_model's RNNModel('LSTM', 33278, 200, 200, 2)."""

    def __init__(self, ntoken=33278, ninp=200, nhid=200, nlayers=2, dropout=0.2):
        super().__init__()
        self.ntoken = ntoken
        self.drop = nn.Dropout(dropout)
        self.encoder = nn.Embedding(ntoken, ninp)
        self.rnn = nn.LSTM(ninp, nhid, nlayers, dropout=dropout)
        self.decoder = nn.Linear(nhid, ntoken)

    def forward(self, input, hidden):
        emb = self.drop(self.encoder(input))
        output, hidden = self.rnn(emb, hidden)
        output = self.drop(output)
        decoded = self.decoder(output).view(-1, self.ntoken)
        return F.log_softmax(decoded, dim=1), hidden


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return self.weight * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps))


def rotate_half(x):
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def repeat_kv(hidden_states, n_rep):
    """Hugging Face transformers' Llama repeat_kv."""
    batch, num_key_value_heads, slen, head_dim = hidden_states.shape
    if n_rep == 1:
        return hidden_states
    hidden_states = hidden_states[:, :, None, :, :].expand(batch, num_key_value_heads, n_rep,
                                                           slen, head_dim)
    return hidden_states.reshape(batch, num_key_value_heads * n_rep, slen, head_dim)


class LlamaBlock(nn.Module):
    """Llama decoder block: RMSNorm, RoPE, grouped-query attention (8 q / 2 kv heads), SwiGLU."""

    def __init__(self, dim=512, n_heads=8, n_kv_heads=2, hidden=1536, max_positions=512,
                 repeat="repeat_interleave"):
        super().__init__()
        self.n_heads, self.n_kv_heads = n_heads, n_kv_heads
        self.head_dim = dim // n_heads
        self.n_rep = n_heads // n_kv_heads
        self.repeat = repeat
        self.attention_norm = RMSNorm(dim)
        self.wq = nn.Linear(dim, n_heads * self.head_dim, bias=False)
        self.wk = nn.Linear(dim, n_kv_heads * self.head_dim, bias=False)
        self.wv = nn.Linear(dim, n_kv_heads * self.head_dim, bias=False)
        self.wo = nn.Linear(n_heads * self.head_dim, dim, bias=False)
        self.ffn_norm = RMSNorm(dim)
        self.w1 = nn.Linear(dim, hidden, bias=False)
        self.w3 = nn.Linear(dim, hidden, bias=False)
        self.w2 = nn.Linear(hidden, dim, bias=False)
        inv_freq = 1.0 / (10000 ** (torch.arange(0, self.head_dim, 2).float() / self.head_dim))
        freqs = torch.outer(torch.arange(max_positions).float(), inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1)
        self.register_buffer("cos_cached", emb.cos(), persistent=False)
        self.register_buffer("sin_cached", emb.sin(), persistent=False)

    def attention(self, x):
        b, s, _ = x.shape
        q = self.wq(x).view(b, s, self.n_heads, self.head_dim).transpose(1, 2)
        k = self.wk(x).view(b, s, self.n_kv_heads, self.head_dim).transpose(1, 2)
        v = self.wv(x).view(b, s, self.n_kv_heads, self.head_dim).transpose(1, 2)
        cos, sin = self.cos_cached[:s], self.sin_cached[:s]
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        if self.repeat == "repeat_interleave":
            k = k.repeat_interleave(self.n_rep, dim=1)
            v = v.repeat_interleave(self.n_rep, dim=1)
        else:
            k = repeat_kv(k, self.n_rep)
            v = repeat_kv(v, self.n_rep)
        scores = torch.matmul(q, k.transpose(2, 3)) / math.sqrt(self.head_dim)
        mask = torch.triu(torch.full((s, s), float("-inf"), device=x.device), diagonal=1)
        probs = F.softmax((scores + mask).float(), dim=-1).type_as(q)
        return self.wo(torch.matmul(probs, v).transpose(1, 2).reshape(b, s, -1))

    def forward(self, x):
        h = x + self.attention(self.attention_norm(x))
        y = self.ffn_norm(h)
        return h + self.w2(F.silu(self.w1(y)) * self.w3(y))


class LlamaDecodeStep(LlamaBlock):
    """One decode step of LlamaBlock with a KV cache, as Hugging Face decoders export it with
    past key/values: the new token's k and v concatenated to past_key/past_value [N, 2 KV
    heads, past, 64] on the sequence axis, RoPE at position past, repeat_kv, no mask (a single
    query sees every cached token); returns the block's output and present_key/present_value."""

    def __init__(self):
        super().__init__(repeat="repeat_kv", max_positions=1)
        self.register_buffer("inv_freq", 1.0 / (10000 ** (
            torch.arange(0, self.head_dim, 2).float() / self.head_dim)), persistent=False)

    def forward(self, x, past_key, past_value):
        b, s, _ = x.shape
        y = self.attention_norm(x)
        q = self.wq(y).view(b, s, self.n_heads, self.head_dim).transpose(1, 2)
        k = self.wk(y).view(b, s, self.n_kv_heads, self.head_dim).transpose(1, 2)
        v = self.wv(y).view(b, s, self.n_kv_heads, self.head_dim).transpose(1, 2)
        past = past_key.shape[2]
        # The rotary angles of positions past .. past + s - 1 (computed, not a table slice).
        positions = torch.arange(s, dtype=torch.float32) + past
        freqs = positions[:, None] * self.inv_freq[None, :]
        emb = torch.cat((freqs, freqs), dim=-1)
        cos, sin = emb.cos(), emb.sin()
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        present_key = torch.cat([past_key, k], dim=2)
        present_value = torch.cat([past_value, v], dim=2)
        keys = repeat_kv(present_key, self.n_rep)
        values = repeat_kv(present_value, self.n_rep)
        scores = torch.matmul(q, keys.transpose(2, 3)) / math.sqrt(self.head_dim)
        probs = F.softmax(scores.float(), dim=-1).type_as(q)
        h = x + self.wo(torch.matmul(probs, values).transpose(1, 2).reshape(b, s, -1))
        z = self.ffn_norm(h)
        return h + self.w2(F.silu(self.w1(z)) * self.w3(z)), present_key, present_value


# ---------------------------------------------------------------------------
# The corpus
# ---------------------------------------------------------------------------


@dataclasses.dataclass
class Entry:
    name: str
    description: str
    source: str
    build: typing.Callable[[], nn.Module]
    inputs: typing.Callable[[int], tuple]  # batch -> torch.onnx.export's args
    input_names: list
    output_names: list
    batch: int  # exported batch
    other_batches: tuple
    batch_axes: dict  # data input name -> batch axis (None: no batch axis)
    layout: str
    opset: typing.Optional[int] = None
    dynamic_axes: typing.Optional[dict] = None
    precision: str = "fp32"
    seq_len: typing.Optional[int] = None
    kind: str = "plain"  # plain, lstm_lm, detection
    note: str = ""
    # Static exports whose batch the exporter folded into literal shapes: where.  Recorded as
    # batch_folded_into_constants; the cases carry no "nnergy_refuses": whether re-binding
    # such a file is sound is the importer's question, the MACs are the model's at that batch.
    batch_folded: str = ""
    # Symbolic dims other than batch and seq, with the value each case binds (e.g. past=512).
    named_dims: dict = dataclasses.field(default_factory=dict)


def _randn(*shape):
    torch.manual_seed(1)
    return torch.randn(*shape)


def tensor_input(shape, batch_axis=0):
    def make(batch):
        s = list(shape)
        s[batch_axis] = batch
        return (_randn(*s),)
    return make


def images_input(size):
    def make(batch):
        torch.manual_seed(1)
        return ([torch.rand(3, size[0], size[1]) for _ in range(batch)],)
    return make


def lm_input(seq, nlayers=2, nhid=200, ntoken=33278):
    def make(batch):
        torch.manual_seed(1)
        tokens = torch.randint(0, ntoken, (seq, batch))
        return (tokens, (torch.zeros(nlayers, batch, nhid), torch.zeros(nlayers, batch, nhid)))
    return make


def decode_input(past, dim=512, kv_heads=2, head_dim=64):
    def make(batch):
        torch.manual_seed(1)
        return (torch.randn(batch, 1, dim), torch.randn(batch, kv_heads, past, head_dim),
                torch.randn(batch, kv_heads, past, head_dim))
    return make


def transformer_input(src_len, tgt_len, dim):
    def make(batch):
        torch.manual_seed(1)
        return (torch.randn(src_len, batch, dim), torch.randn(tgt_len, batch, dim))
    return make


ONE = {"input": 0}
GQA_NOTES = {
    ("repeat_interleave", True):
        "k (after RoPE, whose head axis the exporter no longer knows statically) is repeated "
        "by a Loop over SplitToSequence with SequenceInsert / SequenceAt in its body and "
        "ConcatFromSequence after it; v (head axis known, 2) by Split + Expand + Reshape + "
        "Concat",
    ("repeat_interleave", False):
        "k and v are repeated by Split + Expand + Reshape + Concat (no Loop with static shapes)",
    ("repeat_kv", True): "repeat_kv: Unsqueeze + Expand + Reshape with shapes from Shape/Gather",
    ("repeat_kv", False): "repeat_kv: Unsqueeze + Expand + Reshape with literal shapes",
}
NCHW = "NCHW (N, C, H, W)"
BSE = "batch-first (N, S, E)"
SEQ_FIRST = "sequence-first (S, N, E)"


def corpus():
    img = [1, 3, 224, 224]
    gpt_shape = [2, 128, 256]
    io = (["input"], ["output"])
    entries = []
    for prec in ("fp16", "bf16"):
        entries.append(Entry(
            f"resnet18_{prec}", f"ResNet-18 in {prec}, dynamic batch, default opset",
            "torchvision.models", tv("resnet18"), tensor_input(img), *io, 1, (8,), ONE, NCHW,
            dynamic_axes=BATCH_DYN, precision=prec))
        entries.append(Entry(
            f"gpt_block_{prec}", f"GPT-style pre-LN block (export_user_models.GPTBlock, d 256, "
            f"4 heads) in {prec}, dynamic batch and seq, default opset", "torch.nn", GPTBlock,
            tensor_input(gpt_shape), *io, 2, (8,), ONE, BSE, dynamic_axes=BATCH_SEQ_DYN,
            precision=prec, seq_len=128))
    entries += [
        Entry("transformer_seq_first", "nn.Transformer encoder-decoder (d_model 512, 8 heads, "
              "3+3 layers, FFN 2048, batch_first=False), model(src, tgt) with static source "
              "64 x batch 8 and target 32 x batch 8, no dynamic_axes", "torch.nn",
              lambda: nn.Transformer(d_model=512, nhead=8, num_encoder_layers=3,
                                     num_decoder_layers=3),
              transformer_input(64, 32, 512), ["src", "tgt"], ["output"], 8, (1, 16),
              {"src": 1, "tgt": 1}, SEQ_FIRST, seq_len=64,
              note="two data inputs, src [64, N, 512] and tgt [32, N, 512]; seq_len is the "
                   "source length",
              batch_folded="nn.MultiheadAttention's view(tgt_len, bsz * num_heads, head_dim) "
                           "and the in-projection's (S x N, E) views are folded into literal "
                           "Reshape targets"),
        Entry("transformer_encoder_seq_first", "nn.TransformerEncoder, 2 layers, d_model 256, "
              "4 heads, FFN 2048, batch_first=False, static [S 64, N 4, 256]", "torch.nn",
              SeqFirstEncoder, tensor_input([64, 4, 256], 1), *io, 4, (1, 8), {"input": 1},
              SEQ_FIRST, seq_len=64,
              batch_folded="nn.MultiheadAttention's view(tgt_len, bsz * num_heads, head_dim) "
                           "and the in-projection's (S x N, E) views are folded into literal "
                           "Reshape targets"),
        Entry("lstm_lm_seq_first", "pytorch/examples word_language_model LSTM (Embedding "
              "33278 x 200, 2-layer LSTM 200, Linear decoder to 33278 words, log_softmax), "
              "token ids [bptt 35, batch 20] and state (h0, c0) [2, 20, 200] as its "
              "export_onnx passes them, static", "torch.nn (pytorch/examples)",
              WordLanguageModel, lm_input(35), ["input", "h0", "c0"],
              ["output", "hn", "cn"], 20, (1, 8), {"input": 1, "h0": 1, "c0": 1},
              "sequence-first: tokens (S, N), state (layers, N, hidden)", seq_len=35,
              kind="lstm_lm", note="output is decoded.view(-1, ntoken): [S x N, 33278]; the "
              "batch is axis 1 of all three data inputs and appears in no literal shape"),
    ]
    det = "torchvision.models.detection"
    rcnn_out = ["boxes", "labels", "scores"]  # the order of the returned dicts' keys
    single_stage_out = ["boxes", "scores", "labels"]
    for name, size, outputs, desc in [
            ("fasterrcnn_mobilenet_v3_large_320_fpn", 320, rcnn_out,
             "Faster R-CNN, MobileNetV3-Large 320 FPN backbone"),
            ("fasterrcnn_resnet50_fpn", 800, rcnn_out, "Faster R-CNN, ResNet-50 FPN backbone"),
            ("ssdlite320_mobilenet_v3_large", 320, single_stage_out,
             "SSDlite 320, MobileNetV3-Large backbone"),
            ("retinanet_resnet50_fpn", 800, single_stage_out,
             "RetinaNet, ResNet-50 FPN backbone")]:
        entries.append(Entry(
            name, f"{desc}, eval, one image [3, {size}, {size}] in a list, opset 11 "
            "(as torchvision's ONNX tests export it)", det,
            (lambda n=name: getattr(detection, n)(weights=None, weights_backbone=None)),
            images_input((size, size)), ["images"], outputs, 1, (2,), {"images": None},
            "list of [3, H, W] images; one graph input per image, no batch axis",
            opset=11, kind="detection",
            note="the file takes one image; the case of batch N is the model run on N images "
                 "of the same size (N runs of the file)"))
    entries.append(Entry(
        "deeplabv3_mobilenet_v3_large", "DeepLabV3 MobileNetV3-Large semantic segmentation "
        "('out' of the returned dict), static [1, 3, 520, 520], opset 11",
        "torchvision.models.segmentation",
        lambda: SegmentationOut(torchvision.models.segmentation.deeplabv3_mobilenet_v3_large(
            weights=None, weights_backbone=None)),
        tensor_input([1, 3, 520, 520]), *io, 1, (2,), ONE, NCHW, opset=11))
    for repeat in ("repeat_interleave", "repeat_kv"):
        how = ("k.repeat_interleave(4, dim=1)" if repeat == "repeat_interleave" else
               "Hugging Face repeat_kv (expand + reshape)")
        for dynamic in (True, False):
            entries.append(Entry(
                f"llama_gqa_{repeat}_{'dynamic' if dynamic else 'static'}",
                f"Llama-style decoder block (RMSNorm, RoPE, d 512, 8 query / 2 KV heads, "
                f"SwiGLU 1536, torch.triu causal mask), KV heads repeated with {how}, "
                + ("dynamic batch and seq" if dynamic else "static [2, 128, 512]"),
                "torch.nn", (lambda r=repeat: LlamaBlock(repeat=r)),
                tensor_input([2, 128, 512]), *io, 2, (8,), ONE, BSE,
                dynamic_axes=BATCH_SEQ_DYN if dynamic else None, seq_len=128,
                note=GQA_NOTES[repeat, dynamic],
                batch_folded="" if dynamic else "the q/k/v view(b, s, heads, head_dim) and "
                "the output reshape(b, s, -1) are folded into literal Reshape targets" + (
                    "; the repeat's per-head Concat shapes [2, 1] + [128, 64] hold the batch "
                    "too, and its Expand/Split of the repeats run over the 2 KV heads: the "
                    "exported batch and the KV-head count are both 2"
                    if repeat == "repeat_interleave" else "")))
    past_axes = {0: "batch", 2: "past"}
    entries.append(Entry(
        "llama_decode_step_past_kv", "One decode step of the Llama-style block (d 512, 8 query "
        "/ 2 KV heads, SwiGLU 1536) with a KV cache: x [N, 1, 512], past_key and past_value "
        "[N, 2, past, 64] in, output and present_key/present_value [N, 2, past + 1, 64] out, "
        "dynamic batch and past length (as Hugging Face decoders export with past key/values)",
        "torch.nn", LlamaDecodeStep, decode_input(512), ["x", "past_key", "past_value"],
        ["output", "present_key", "present_value"], 2, (8,),
        {"x": 0, "past_key": 0, "past_value": 0}, BSE,
        dynamic_axes={"x": {0: "batch"}, "past_key": past_axes, "past_value": past_axes,
                      "output": {0: "batch"}, "present_key": past_axes,
                      "present_value": past_axes},
        named_dims={"past": 512},
        note="the cache grows by concatenation (Concat on axis 2); the rotary angles are "
             "computed from past_key.shape[2]"))
    for opset in range(11, MAX_OPSET_TORCH + 1):
        entries.append(Entry(
            f"resnet18_opset{opset}", f"ResNet-18, static batch 1, opset {opset}",
            "torchvision.models", tv("resnet18"), tensor_input(img), *io, 1, (8,), ONE, NCHW,
            opset=opset))
    for opset in range(11, MAX_OPSET_TORCH + 1):
        entries.append(Entry(
            f"gpt_block_opset{opset}", f"GPT-style pre-LN block (export_user_models.GPTBlock, "
            f"d 256, 4 heads), dynamic batch and seq, opset {opset}", "torch.nn", GPTBlock,
            tensor_input(gpt_shape), *io, 2, (8,), ONE, BSE, opset=opset,
            dynamic_axes=BATCH_SEQ_DYN, seq_len=128))
    return entries


# ---------------------------------------------------------------------------
# Precision
# ---------------------------------------------------------------------------

F32, F16 = onnx.TensorProto.FLOAT, onnx.TensorProto.FLOAT16


def to_float16(model):
    """Turns an fp32 export into the fp16 file a GPU export of model.half() gives.

    FLOAT becomes FLOAT16 in initializers, graph inputs, outputs and value_info,
    Constant / ConstantOfShape tensor values and Cast targets, in the main graph and
    every subgraph.  Returns what was changed, by kind.
    """
    changed = collections.Counter()

    def tensor(t, kind):
        if t.data_type != F32:
            return
        converted = onnx.numpy_helper.from_array(
            onnx.numpy_helper.to_array(t).astype(np.float16), t.name)
        t.CopyFrom(converted)
        changed[kind] += 1

    def value(v, kind):
        if v.type.tensor_type.elem_type == F32:
            v.type.tensor_type.elem_type = F16
            changed[kind] += 1

    def graph(g):
        for init in g.initializer:
            tensor(init, "initializers")
        for v in g.input:
            value(v, "graph inputs")
        for v in g.output:
            value(v, "graph outputs")
        for v in g.value_info:
            value(v, "value_info")
        for node in g.node:
            for attr in node.attribute:
                if attr.type == onnx.AttributeProto.TENSOR:
                    tensor(attr.t, f"{node.op_type} values")
                elif attr.type == onnx.AttributeProto.GRAPH:
                    graph(attr.g)
                elif attr.type == onnx.AttributeProto.GRAPHS:
                    for sub in attr.graphs:
                        graph(sub)
                elif attr.name in ("value_float", "value_floats"):
                    raise RuntimeError(f"{node.op_type} {attr.name} is not converted")
                elif node.op_type == "Cast" and attr.name == "to" and attr.i == F32:
                    attr.i = F16
                    changed["Cast targets"] += 1

    graph(model.graph)
    return dict(changed)


def _to_dtype(obj, dtype):
    if isinstance(obj, torch.Tensor):
        return obj.to(dtype) if obj.is_floating_point() else obj
    if isinstance(obj, (tuple, list)):
        return type(obj)(_to_dtype(o, dtype) for o in obj)
    return obj


# ---------------------------------------------------------------------------
# MACs
# ---------------------------------------------------------------------------


class _Unpack(nn.Module):
    """count_macs calls model(x); this calls model(*x)."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, args):
        return self.model(*args)


def count_lstm_lm(model, args):
    tokens, _ = args
    counter = MacCounter()
    with torch.no_grad(), counter:
        model(*args)
    lstm = rnn_closed_form(model, tokens, batch_first=False)
    seq, batch = tokens.shape
    decoder = seq * batch * model.decoder.in_features * model.decoder.out_features
    if lstm + decoder != counter.macs:
        raise RuntimeError(f"closed form {lstm} + {decoder} != dispatch count {counter.macs}")
    return lstm + decoder, "closed-form+dispatch", dict(counter.by_op)


def detection_constants(model):
    if hasattr(model, "rpn"):
        return {"rpn.pre_nms_top_n (per FPN level and image)": model.rpn.pre_nms_top_n(),
                "rpn.post_nms_top_n (proposals per image)": model.rpn.post_nms_top_n(),
                "rpn.score_thresh": model.rpn.score_thresh,
                "roi_heads.score_thresh": model.roi_heads.score_thresh,
                "roi_heads.detections_per_img": model.roi_heads.detections_per_img}
    return {"topk_candidates (per class for SSD, per level for RetinaNet, before NMS)":
            model.topk_candidates,
            "score_thresh": model.score_thresh,
            "detections_per_img": model.detections_per_img}


def count_detection(model, args):
    """MACs of the run, the box head's share and the run's counts (see the module doc)."""
    (images,) = args
    counter = MacCounter()
    run = {}
    hooks = []
    if hasattr(model, "roi_heads"):
        def before(_module, inputs):
            run["proposals_per_image"] = [int(p.shape[0]) for p in inputs[1]]
            run["start"] = counter.macs

        def after(_module, _inputs, _output):
            run["box_head_macs"] = counter.macs - run.pop("start")

        hooks = [model.roi_heads.register_forward_pre_hook(before),
                 model.roi_heads.register_forward_hook(after)]
    try:
        with torch.no_grad(), counter:
            out = model(images)
    finally:
        for h in hooks:
            h.remove()
    run["detections_per_image"] = [int(o["boxes"].shape[0]) for o in out]
    macs = counter.macs
    if hasattr(model, "roi_heads"):
        per = sum(m.in_features * m.out_features for part in
                  (model.roi_heads.box_head, model.roi_heads.box_predictor)
                  for m in part.modules() if isinstance(m, nn.Linear))
        proposals = sum(run["proposals_per_image"])
        if run["box_head_macs"] != per * proposals:
            raise RuntimeError(f"box head {run['box_head_macs']} MACs for {proposals} "
                               f"proposals, closed form {per} per proposal")
        run["box_head_macs_per_proposal"] = per
        at_constant = macs - run["box_head_macs"] + per * model.rpn.post_nms_top_n() * len(images)
    else:
        at_constant = macs
    return macs, "dispatch", dict(counter.by_op), {"macs_at_constant_counts": at_constant,
                                                   "data_dependent_run": run}


def macs_of(e, model, args):
    """(macs, method, by_op, extra case fields)."""
    if e.kind == "lstm_lm":
        return count_lstm_lm(model, args) + ({},)
    if e.kind == "detection":
        return count_detection(model, args)
    if len(args) == 1:
        return count_macs(model, args[0]) + ({},)
    return count_macs(_Unpack(model), args) + ({},)


# ---------------------------------------------------------------------------
# Export and checks
# ---------------------------------------------------------------------------


def build(e):
    torch.manual_seed(0)
    model = e.build()
    perturb(model)
    model.eval()
    return model


def export_call(e, precision_text=""):
    kwargs = {"input_names": e.input_names, "output_names": e.output_names}
    if e.dynamic_axes:
        kwargs["dynamic_axes"] = e.dynamic_axes
    if e.opset:
        kwargs["opset_version"] = e.opset
    text = ", ".join(f"{k}={v!r}" for k, v in kwargs.items())
    args = {"detection": "([image],)", "lstm_lm": "(input, (h0, c0))"}.get(e.kind, "x")
    if len(e.input_names) > 1 and e.kind == "plain":
        args = "(" + ", ".join(e.input_names) + ")"
    return kwargs, f"torch.onnx.export({precision_text}model, {args}, f, {text})"


def first_line(exc):
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text.splitlines()[0] if text else ''}"


def export(e, path):
    """Exports; returns (loaded proto, precision_method, call text)."""
    model = build(e)
    args = e.inputs(e.batch)
    kwargs, call = export_call(e)
    if e.precision == "fp32":
        torch.onnx.export(model, args, path, **kwargs)
        return onnx.load(path), "exported in fp32", call
    dtype = torch.bfloat16 if e.precision == "bf16" else torch.float16
    prefix = "model.half(); " if e.precision == "fp16" else "model.to(torch.bfloat16); "
    try:
        torch.onnx.export(model.to(dtype), _to_dtype(args, dtype), path, **kwargs)
        _, call = export_call(e, prefix)
        return onnx.load(path), f"exported directly ({prefix.strip('; ')}, inputs in " \
                                f"{e.precision})", call
    except Exception as exc:  # noqa: BLE001  (the reason goes into the manifest)
        if e.precision != "fp16":
            raise
        reason = first_line(exc)
    model = build(e)
    torch.onnx.export(model, args, path, **kwargs)
    proto = onnx.load(path)
    changed = to_float16(proto)
    summary = ", ".join(f"{v} {k}" for k, v in sorted(changed.items()))
    return proto, (f"fp32 export converted to FLOAT16 by export_user_models_modern.to_float16 "
                   f"({summary}); the direct export of model.half() failed on the CPU "
                   f"while tracing: {reason}"), call


def op_counts(proto):
    main = collections.Counter()
    nested = collections.Counter()

    def name(n):
        return n.op_type if n.domain in ("", "ai.onnx") else f"{n.domain}.{n.op_type}"

    def walk(g, counter):
        for n in g.node:
            counter[name(n)] += 1
            for a in n.attribute:
                for sub in ([a.g] if a.type == onnx.AttributeProto.GRAPH else list(a.graphs)):
                    walk(sub, nested)

    walk(proto.graph, main)
    return dict(sorted(main.items())), dict(sorted(nested.items()))


def process(e, out_dir):
    path = os.path.join(out_dir, f"{e.name}.onnx")
    proto, precision_method, call_text = export(e, path)
    try:
        onnx.checker.check_model(proto)
        checker = True
    except Exception as exc:  # noqa: BLE001
        checker = first_line(exc)
    stripped, stripped_elements = strip_weights(proto)
    try:
        check_shapes(proto)
        strict, strict_error = True, None
    except Exception as exc:  # noqa: BLE001
        strict, strict_error = False, first_line(exc)
    onnx.save(proto, path)
    size = os.path.getsize(path)
    ops, nested_ops = op_counts(proto)

    model = build(e)  # fp32: parameters and MACs do not depend on the file's precision
    stats = bn_statistics(proto)
    float_elements = sum(_numel(i.dims) for i in proto.graph.initializer
                         if i.data_type in FLOAT_TYPES and i.name not in stats)
    params_torch = sum(p.numel() for p in model.parameters())
    params_expected, param_note = expected_parameters(model, collections.Counter(ops), False)
    constants = float_elements - params_expected
    if constants < 0:
        raise RuntimeError(f"{e.name}: file holds {float_elements} float initializer elements, "
                           f"fewer than the {params_expected} parameters expected")

    dims = input_dims(proto)
    initializers = {i.name for i in proto.graph.initializer}
    data_inputs = [n for n in dims if n not in initializers]
    if sorted(data_inputs) != sorted(e.batch_axes):
        raise RuntimeError(f"{e.name}: data inputs {data_inputs}, expected {list(e.batch_axes)}")
    symbolic = sorted({d for n in data_inputs for d in dims[n] if isinstance(d, str)})
    named = {}
    if e.seq_len is not None and "seq" in symbolic:
        named["seq"] = e.seq_len
    axes = set(e.batch_axes.values())
    batch_axis = axes.pop() if len(axes) == 1 else None
    if batch_axis != 0 and "batch" in symbolic:
        named["batch"] = None  # filled per case
    for dim, value in e.named_dims.items():
        if dim in symbolic:
            named[dim] = value
    unknown = [d for d in symbolic if d not in ("batch", "seq", *e.named_dims)]
    if unknown:
        raise RuntimeError(f"{e.name}: unexpected symbolic dims {unknown}")

    cases = []
    detail_method = None
    for batch in (e.batch, *e.other_batches):
        macs, detail_method, by_op, extra = macs_of(e, build(e), e.inputs(batch))
        case_named = {k: (batch if v is None else v) for k, v in named.items()}
        case = {"batch": batch, "macs": macs, "macs_by_aten_op": by_op,
                "bindings": {"batch": batch, "named": case_named}}
        case.update(extra)
        cases.append(case)

    dynamic = None
    if e.dynamic_axes:
        dynamic = {k: {str(a): n for a, n in v.items()} for k, v in e.dynamic_axes.items()}
    shapes = {n: list(dims[n]) for n in data_inputs}
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
            "training_mode": "EVAL (default)",
            "do_constant_folding": True,
            "export_params": True,
        },
        "precision": e.precision,
        "precision_method": precision_method,
        "data_inputs": [{"name": n, "dims": dims[n]} for n in data_inputs],
        "input_shape_at_export": shapes[data_inputs[0]],
        "input_shapes_at_export": shapes,
        "batch_axis": batch_axis,
        "batch_axes": e.batch_axes,
        "layout": e.layout,
        "exported_batch": e.batch,
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
        "onnx_ops": ops,
        "onnx_ops_in_subgraphs": nested_ops,
        "onnx_checker": checker,
        "onnx_strict_shape_inference": strict,
        "file_bytes": size,
    }
    if strict_error:
        item["onnx_strict_shape_inference_error"] = strict_error
    if e.kind == "detection":
        first = cases[0]["data_dependent_run"]
        item["data_dependent"] = {
            "constants": detection_constants(model),
            "export_run": {k: first[k] for k in ("proposals_per_image", "detections_per_image")
                           if k in first},
            "macs_at_constant_counts": {str(c["batch"]): c["macs_at_constant_counts"]
                                        for c in cases},
            "method": (
                "box head (roi_heads.box_head + box_predictor) MACs measured with the dispatch "
                "counter between forward hooks on roi_heads, divided by the run's proposals "
                "(equal to the closed form sum(in x out) of its Linear layers, "
                f"{first.get('box_head_macs_per_proposal')} per proposal); "
                "macs_at_constant_counts = macs - box head MACs of the run + MACs per proposal "
                "x rpn.post_nms_top_n() x images; backbone, FPN and RPN run on every anchor"
                if "box_head_macs" in first else
                "every matrix operation (backbone, extra layers / FPN, classification and "
                "regression heads) runs on all anchors before the data-dependent selection "
                "(score threshold, topk_candidates, NMS, detections_per_img), after which "
                "no matrix operation follows: macs_at_constant_counts = macs"),
        }
    if e.batch_folded:
        item["batch_folded_into_constants"] = {"why": e.batch_folded,
                                               "reshape_targets": literal_reshape_targets(proto)}
    if e.note:
        item["note"] = e.note
    return item


def literal_reshape_targets(proto):
    """The distinct literal (initializer or Constant) shapes Reshape nodes use, with counts."""
    literal = {i.name: i for i in proto.graph.initializer}
    for node in proto.graph.node:
        if node.op_type == "Constant" and node.attribute[0].type == onnx.AttributeProto.TENSOR:
            literal[node.output[0]] = node.attribute[0].t
    counts = collections.Counter()
    for node in proto.graph.node:
        if node.op_type == "Reshape" and node.input[1] in literal:
            counts[str(onnx.numpy_helper.to_array(literal[node.input[1]]).tolist())] += 1
    return dict(sorted(counts.items()))


def opset18_not_available():
    """torch 1.13 has no opset 18 at all; the manifest says so under not_produced."""
    return {
        "opset 18": f"torch {TORCH_VERSION} exports up to opset {MAX_OPSET_TORCH}: "
                    "torch.onnx.export(..., opset_version=18) raises 'ValueError: Unsupported "
                    "ONNX opset version: 18'",
    }


def run_nnergy(binary, out_dir, models):
    """Prints what nnergy predict does with every case (not recorded in the manifest)."""
    for m in models:
        path = os.path.join(out_dir, m["file"])
        for case in m["cases"]:
            cmd = [binary, "predict", path, "--batch", str(case["batch"]), "--json"]
            for k, v in case["bindings"]["named"].items():
                cmd += ["--dim", f"{k}={v}"]
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
            want = case.get("macs_at_constant_counts", case["macs"])
            if proc.returncode == 0:
                try:
                    doc = json.loads(proc.stdout)
                    macs = doc["totals"]["mac_count"]
                    params = doc["totals"]["parameter_count"]
                    what = (f"macs {macs:.6g} vs {want:.6g} (ratio {macs / want:.4f}), "
                            f"parameters {params} vs {m['parameters_expected']}, precision "
                            f"{doc['context']['precision']} (file {m['precision']})")
                except (ValueError, KeyError, TypeError) as exc:
                    what = f"unreadable output ({exc})"
            else:
                lines = (proc.stderr or proc.stdout).strip().splitlines()
                what = lines[0] if lines else ""
            print(f"{m['file']:48s} b{case['batch']:<3d} exit {proc.returncode}  {what}",
                  flush=True)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=os.path.join("tests", "fixtures", "user_exports_modern"))
    parser.add_argument("--only", default="", help="comma-separated names (default: all)")
    parser.add_argument("--nnergy", default="", help="built nnergy binary to run on every case")
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
    previous, refused = {}, {}
    if args.only and os.path.exists(manifest_path):
        with open(manifest_path) as f:
            old = json.load(f)
        previous = {m["file"]: m for m in old["models"]}
        refused = {k: v for k, v in old.get("not_produced", {}).items() if k != "opset 18"}

    failures = []
    for e in entries:
        path = os.path.join(args.out, f"{e.name}.onnx")
        try:
            item = process(e, args.out)
        except torch.onnx.errors.UnsupportedOperatorError as exc:
            # torch 1.13 refuses the export: not produced, listed with the error.
            refused[f"{e.name}.onnx"] = first_line(exc)
            previous.pop(f"{e.name}.onnx", None)
            if os.path.exists(path):
                os.remove(path)
            print(f"{e.name:44s} not produced: {first_line(exc)}", flush=True)
            continue
        except Exception as exc:  # report every failure, then exit non-zero
            failures.append(e.name)
            print(f"FAILED {e.name}: {first_line(exc)}", file=sys.stderr, flush=True)
            continue
        refused.pop(item["file"], None)
        previous[item["file"]] = item
        macs = ", ".join(f"b{c['batch']} {c['macs'] / 1e9:.3f} GMAC" for c in item["cases"])
        flag = "  (large)" if item["file_bytes"] > SIZE_WARN_BYTES else ""
        print(f"{e.name:44s} {item['file_bytes'] / 1024:7.1f} KB{flag}  {macs}  "
              f"params {item['parameters_expected']}  strict "
              f"{item['onnx_strict_shape_inference']}", flush=True)

    order = [f"{e.name}.onnx" for e in corpus()]
    models = [previous[f] for f in order if f in previous]
    not_produced = {f: refused[f] for f in order if f in refused}
    not_produced.update(opset18_not_available())
    manifest = {
        "description": "User-style torch.onnx.export files beyond the first corpus "
                       "(precision fp16/bf16, sequence-first static layouts, detection and "
                       "segmentation, grouped-query attention, opsets 11-17), with MAC counts "
                       "from PyTorch (tools/export_user_models_modern.py); weights stripped "
                       f"(external data '{STRIPPED_LOCATION}', which does not exist); "
                       "exports torch refuses are listed under not_produced with the error: "
                       + "; ".join(f"{k}: {v}" for k, v in not_produced.items()),
        "mac_convention": "1 MAC per multiply-accumulate of matrix operations (Conv, "
                          "ConvTranspose, Gemm/Linear, MatMul/bmm, Einsum, RNN gate GEMMs); "
                          "elementwise, normalisation, pooling and softmax count 0",
        "not_produced": not_produced,
        "models": models,
    }
    with open(manifest_path, "w") as f:
        json.dump(manifest, f, indent=1)
        f.write("\n")
    total = sum(m["file_bytes"] for m in models) + os.path.getsize(manifest_path)
    print(f"{len(models)} files, {total / 1024:.1f} KB in all with the manifest", flush=True)
    if total > TOTAL_LIMIT_BYTES:
        print(f"total size above {TOTAL_LIMIT_BYTES} bytes", file=sys.stderr)
        failures.append("total size")
    if args.nnergy:
        run_nnergy(args.nnergy, args.out, models)
    if failures:
        print(f"failed: {', '.join(failures)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
