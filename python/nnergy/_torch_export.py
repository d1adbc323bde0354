"""The in-process export of a torch.nn.Module to ONNX for nnergy.predict (imports torch)."""

import torch

from nnergy import _core
from nnergy._core import InvalidInput


def _inputs(example_input):
    inputs = example_input if isinstance(example_input, tuple) else (example_input,)
    if example_input is None or not inputs or not all(isinstance(t, torch.Tensor) for t in inputs):
        found = ("None" if example_input is None else
                 ", ".join(type(t).__name__ for t in inputs) or "an empty tuple")
        raise InvalidInput(
            "example_input: expected a torch.Tensor or a tuple of tensors (one batch of the "
            f"module's inputs, e.g. torch.randn(1, 3, 224, 224)), found {found}")
    if any(t.dim() == 0 for t in inputs):
        raise InvalidInput("example_input: expected tensors with a leading batch dimension, "
                           "found a 0-dimensional tensor")
    return inputs


def leading_dimension(example_input):
    """The batch of `example_input`: the leading dimension of its (first) tensor."""
    return int(_inputs(example_input)[0].shape[0])


def highest_opset():
    """The opset a module is exported at by default: the highest the installed torch exports and
    nnergy's ONNX library knows (torch 1.13: 17; torch 2.x exports newer ones, whose operator
    versions nnergy's shape inference would not know)."""
    from torch.onnx import _constants
    torch_max = getattr(_constants, "ONNX_MAX_OPSET", None) or _constants.onnx_main_opset
    return min(int(torch_max), int(_core.max_onnx_opset))


def export_module(module, example_input, path, training, opset_version=None):
    """Writes `module` to `path` as ONNX with torch.onnx.export: inputs named input0, input1, ...
    with a dynamic leading axis "batch"; in training mode with TrainingMode.TRAINING and without
    constant folding (BatchNorm and Dropout kept), else in eval mode; at `opset_version`, default
    highest_opset(). Raises InvalidInput naming the module and the exporter's error when the
    export fails."""
    if opset_version is None:
        opset_version = highest_opset()
    inputs = _inputs(example_input)
    names = [f"input{i}" for i in range(len(inputs))]
    mode = torch.onnx.TrainingMode.TRAINING if training else torch.onnx.TrainingMode.EVAL
    try:
        torch.onnx.export(module, inputs, path, input_names=names,
                          dynamic_axes={n: {0: "batch"} for n in names},
                          opset_version=opset_version, training=mode,
                          do_constant_folding=not training)
    except Exception as e:  # the exporter raises many kinds; all mean "this module does not export"
        reason = (str(e).strip().splitlines() or [""])[0]
        raise InvalidInput(
            f"model: torch.onnx.export (torch {torch.__version__}, opset {opset_version}) could "
            f"not export {type(module).__name__}: {type(e).__name__}: {reason}; export it "
            "yourself (torch.onnx.export, another opset_version, or a module without the "
            "unsupported operation) and pass the .onnx path") from e
