"""examples/python_predict.py runs to the end and prints what it promises."""

import os
import pathlib
import subprocess
import sys

EXAMPLE = pathlib.Path(__file__).resolve().parents[2] / "examples" / "python_predict.py"


def test_example_runs():
    result = subprocess.run([sys.executable, str(EXAMPLE)], capture_output=True, text=True,
                            env=dict(os.environ), timeout=120)
    assert result.returncode == 0, result.stderr
    assert "resnet50:" in result.stdout
    assert "energy-optimal clock" in result.stdout
    assert "Measurement('monitor'" in result.stdout
    assert "InvalidInput: device: expected a device of the catalog" in result.stdout
