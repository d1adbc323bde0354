"""One library, two front ends, same answers: for each command, the Python result's to_dict()
equals the document `nnergy COMMAND --json` prints for the same request: all of it but the
context's command line, date and version, which name the front end and the moment, and with a
setting named in a note as each front end spells it (`--strict-fp32` on the command line is
`strict_fp32` in Python)."""

import json
import os
import re
import subprocess

import pytest

import nnergy
from nnergy import _core

VOLATILE_CONTEXT = ("command_line", "date_utc", "tool_version")


def keyword_spelling(value):
    """Every string of a document with its flags (--name-of-it) spelled as keywords
    (name_of_it)."""
    if isinstance(value, str):
        return re.sub(r"--([a-z][a-z0-9-]*)", lambda m: m.group(1).replace("-", "_"), value)
    if isinstance(value, list):
        return [keyword_spelling(v) for v in value]
    if isinstance(value, dict):
        return {k: keyword_spelling(v) for k, v in value.items()}
    return value


def without_volatile_context(document):
    document = json.loads(json.dumps(document))
    contexts = [document.get("context")] + [r.get("context") for r in document.get("runs", [])]
    for context in filter(None, contexts):
        for key in VOLATILE_CONTEXT:
            context.pop(key, None)
    return keyword_spelling(document)


def cli_json(*arguments):
    if not os.path.exists(_core.cli_path):
        pytest.skip(f"the nnergy executable of this build ({_core.cli_path}) is not built")
    result = subprocess.run([_core.cli_path, *arguments, "--json"], check=True,
                            capture_output=True, text=True)
    return json.loads(result.stdout)


def assert_same(python_result, *cli_arguments):
    expected = without_volatile_context(cli_json(*cli_arguments))
    found = without_volatile_context(python_result.to_dict())
    assert found.keys() == expected.keys()
    for key in expected:
        assert found[key] == expected[key], f"key {key!r} differs"


def test_predict():
    assert_same(nnergy.predict("resnet18", device="t4", batch=8, mode="training"),
                "predict", "resnet18", "--device", "t4", "--batch", "8", "--mode", "training")


def test_compare():
    assert_same(nnergy.compare("resnet18", devices=["t4", "a100-40gb"], batches=[1, 32]),
                "compare", "resnet18", "--devices", "t4,a100-40gb", "--batches", "1,32")


def test_serve():
    assert_same(nnergy.serve("meta-llama/Llama-3.1-8B-Instruct", device="h100",
                             input_tokens=1000, output_tokens=200),
                "serve", "meta-llama/Llama-3.1-8B-Instruct", "--device", "h100",
                "--input-tokens", "1000", "--output-tokens", "200")


def test_account(tmp_path):
    torch = pytest.importorskip("torch")
    run = tmp_path / "run1"
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4))
    x = torch.randn(8, 16)
    with nnergy.session(model, run, power_sources=["synthetic:constant=42"], interval_ms=2) as s:
        for _ in range(2):
            model(x).sum().backward()
            s.step()
    assert_same(nnergy.account(run), "account", str(run))
