"""One library, two front ends, same answers: for each command, the Python result's to_dict()
equals the document `nnergy COMMAND --json` prints for the same request: all of it but the
context's command line, date and version, which name the front end and the moment, and with a
setting named in a note as each front end spells it (`--strict-fp32` and `--precision bf16` on
the command line are `strict_fp32` and `precision=bf16` in Python)."""

import json
import os
import re
import subprocess

import pytest

import nnergy
from nnergy import _core

VOLATILE_CONTEXT = ("command_line", "date_utc", "tool_version")


SETTING_WITH_VALUE = re.compile(
    r"\b(" + "|".join(s["keyword"] for s in _core.predict_settings()) + r")=")


def keyword_spelling(value):
    """Every string of a document with its flags (--name-of-it) spelled as keywords
    (name_of_it), and a setting quoted with its value ("--batch 8" on the command line,
    "batch=8" in Python) as "batch 8"."""
    if isinstance(value, str):
        value = SETTING_WITH_VALUE.sub(lambda m: m.group(1) + " ", value)
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


def test_predict_with_a_setting_of_every_kind():
    """The settings table gives both front ends the same settings: a text, an integer, numbers,
    switches, bindings and vocabularies, each spelled as its front end does."""
    assert_same(nnergy.predict("bert_base", device="h100", batch=4, dims={"seq": 256},
                               precision="bf16", mode="training", optimizer="adam",
                               clock_mhz=1500.0, host_launch_us=10, runtime="cuda-graphs",
                               sweep_clocks=True, sweep_step_mhz=200, ignore_memory=True),
                "predict", "bert_base", "--device", "h100", "--batch", "4", "--dim",
                "seq=256", "--precision", "bf16", "--mode", "training", "--optimizer",
                "adam", "--clock-mhz", "1500", "--host-launch-us", "10", "--runtime",
                "cuda-graphs", "--sweep-clocks", "--sweep-step-mhz", "200", "--ignore-memory")


def test_every_setting_is_a_keyword_and_an_option():
    """Made from one table: nnergy.predict's keyword arguments and nnergy predict's options."""
    import inspect
    keywords = set(inspect.signature(nnergy.predict).parameters)
    if not os.path.exists(_core.cli_path):
        pytest.skip(f"the nnergy executable of this build ({_core.cli_path}) is not built")
    help_text = subprocess.run([_core.cli_path, "predict", "--help"], check=True,
                               capture_output=True, text=True).stdout
    for setting in _core.predict_settings():
        assert setting["keyword"] in keywords
        assert setting["flag"] in help_text
        assert setting["help"].split()[0] in nnergy.predict.__doc__


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
