"""Compare nnergy's training-memory estimate with what PyTorch's autograd really saves.

For each zoo model this script builds the PyTorch module the zoo file was exported from
(tools/export_zoo.py), runs one training forward pass on the CPU at a given batch under
``torch.autograd.graph.saved_tensors_hooks`` and adds up the bytes of every distinct storage
autograd saves for the backward pass, parameters excluded (nnergy counts those as weights).
It then asks ``nnergy predict MODEL --mode training --batch B --json`` for its estimate of the
same quantity (``memory.saved_activations_bytes``: the data inputs plus the activations kept for
the backward pass) and writes both, with their ratio, as JSON.

The PyTorch figure is measured (what autograd holds at the end of the forward pass of this
PyTorch version on this machine); it is the same on a GPU, where the caching allocator adds its
rounding on top.  Differences come from what the ONNX file cannot show: models run in train
mode here (Dropout saves a mask, BatchNorm its batch statistics) while the zoo files were
exported in eval mode, so Dropout is switched off here as in the files (with dropout PyTorch also
keeps the masks and the dropped attention probabilities: on BERT-base about 17 % more on a GPU,
whose fused dropout keeps a 1-byte mask; the CPU keeps a 4-byte one), max-pooling's int64
indices, and in-place operations (``ReLU(inplace=True)``) that PyTorch saves once.

Run (Debian 12's python3-torch and python3-torchvision):

    /usr/bin/python3 tools/validate_saved_activations.py --nnergy build/ci/apps/nnergy/nnergy \
        [--batch 4] [--only resnet50,bert_base] [--out data/validation/saved_activations.json]
"""

import argparse
import datetime
import json
import os
import platform
import subprocess
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import export_zoo  # noqa: E402  (the zoo's own builders: the modules the files came from)


def _storage_key(tensor):
    storage = tensor._storage() if hasattr(tensor, "_storage") else tensor.untyped_storage()
    return storage.data_ptr(), storage.nbytes()


def saved_bytes(module, example):
    """Bytes of the distinct non-parameter storages autograd saves in one forward pass."""
    parameter_keys = {_storage_key(p) for p in module.parameters()}
    saved = {}

    def pack(tensor):
        key = _storage_key(tensor)
        if key not in parameter_keys and key[0] != 0:
            saved[key] = key[1]
        return tensor

    def unpack(tensor):
        return tensor

    with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
        output = module(example)
    del output
    return sum(saved.values())


def nnergy_estimate(nnergy, name, batch):
    result = subprocess.run(
        [nnergy, "predict", name, "--mode", "training", "--batch", str(batch), "--json",
         "--ignore-memory"],
        check=True, capture_output=True, text=True)
    memory = json.loads(result.stdout)["memory"]
    return memory["saved_activations_bytes"], memory["activations_bytes"]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nnergy", required=True, help="path to the nnergy executable")
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--only", default="", help="comma-separated zoo names (default: all)")
    parser.add_argument("--out", default="", help="write the JSON here (default: stdout)")
    args = parser.parse_args(argv)

    only = {n for n in args.only.split(",") if n}
    rows = []
    for entry in export_zoo.zoo_entries():
        if only and entry.name not in only:
            continue
        torch.manual_seed(0)
        module = entry.build()
        module.train()
        for sub in module.modules():  # Dropout as the file has it: exported in eval mode
            if isinstance(sub, torch.nn.Dropout):
                sub.eval()
        example = entry.example()
        example = example.repeat(args.batch, *([1] * (example.dim() - 1)))
        if example.is_floating_point():
            example.requires_grad_(False)
        measured = saved_bytes(module, example)
        # The data input is saved by the first layer's backward only when it needs a
        # gradient; nnergy counts the data inputs in its figure, so add them for a like
        # comparison.
        measured_with_input = measured + example.numel() * example.element_size()
        estimated, activations = nnergy_estimate(args.nnergy, entry.name, args.batch)
        rows.append({
            "model": entry.name,
            "batch": args.batch,
            "pytorch_saved_bytes": measured_with_input,
            "nnergy_saved_bytes": estimated,
            "nnergy_activation_peak_bytes": activations,
            "ratio_nnergy_to_pytorch": estimated / measured_with_input,
        })
        print(f"{entry.name:20s} pytorch {measured_with_input / 2**20:9.1f} MiB  "
              f"nnergy {estimated / 2**20:9.1f} MiB  ratio {estimated / measured_with_input:5.2f}",
              file=sys.stderr)

    document = {
        "context": {
            "what": "bytes autograd saves for the backward pass in one training forward pass "
                    "(distinct storages, parameters excluded, data input included), against "
                    "nnergy's memory.saved_activations_bytes for the same model and batch",
            "how": "tools/validate_saved_activations.py: torch.autograd.graph.saved_tensors_hooks "
                   "on the CPU, modules in train mode with Dropout off (as exported), fp32",
            "torch": torch.__version__,
            "machine": platform.machine(),
            "date": datetime.date.today().isoformat(),
        },
        "runs": rows,
    }
    text = json.dumps(document, indent=2) + "\n"
    if args.out:
        os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
        with open(args.out, "w", encoding="utf-8") as f:
            f.write(text)
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main()
