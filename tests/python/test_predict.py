"""nnergy.predict on a zoo model and on torch.nn.Modules, and its errors."""

import json
import subprocess
import sys

import pytest

import nnergy


def test_import_loads_neither_torch_nor_pandas():
    code = ("import sys, nnergy; "
            "print(json.dumps(['torch' in sys.modules, 'pandas' in sys.modules]))")
    out = subprocess.run([sys.executable, "-c", "import json; " + code], check=True,
                         capture_output=True, text=True).stdout
    assert json.loads(out) == [False, False]


def test_zoo_model_counts_and_sums():
    p = nnergy.predict("resnet50", device="a100-40gb", batch=32, mode="inference")
    t = p.totals
    # Counted from the architecture: ResNet-50 has 4.09 GMAC and 25.6 M parameters per sample.
    assert t.mac_count / 32 == pytest.approx(4.09e9, rel=0.01)
    assert t.parameter_count == pytest.approx(25.56e6, rel=0.01)
    assert t.energy_j == pytest.approx(t.power_w * t.time_s, rel=1e-9)
    assert t.time_std_s > 0 and t.energy_std_j > 0
    layers = p.layers
    assert {"flop_count", "mac_count", "byte_count", "time_s", "energy_j", "power_w"} <= set(
        layers.columns)
    assert "flops" not in layers.columns
    assert len(layers) == 176
    assert layers["energy_j"].sum() == pytest.approx(t.energy_j, rel=1e-6)
    d = p.to_dict()
    assert "kernel_count" in d["totals"] and "kernel_launches" not in d["totals"]
    assert json.loads(p.to_json())["totals"]["time_s"] == t.time_s
    assert "resnet50" in p.text(top=5)


def test_clock_sweep_names_the_optima():
    p = nnergy.predict("resnet18", device="a100-40gb", batch=16)
    sweep = p.clock_sweep()
    points = sweep.points
    assert len(points) > 5
    assert sweep.energy_optimal["energy_j"] == pytest.approx(points["energy_j"].min())
    assert sweep.edp_optimal["edp_j_s"] == pytest.approx(points["edp_j_s"].min())


def test_bad_arguments_are_named_as_keywords():
    with pytest.raises(nnergy.InvalidInput) as e:
        nnergy.predict("resnet18", batch=0)
    assert "batch=0" in str(e.value)
    with pytest.raises(nnergy.InvalidInput) as e:
        nnergy.predict("resnet18", mode="trainig")
    assert str(e.value).startswith("mode: expected a mode")
    with pytest.raises(ValueError):  # InvalidInput is a ValueError too
        nnergy.predict("resnet18", precision="fp8")
    # Settings checked deep in the library are named as keywords too, never as CLI flags.
    with pytest.raises(nnergy.InvalidInput) as e:
        nnergy.predict("resnet18", dims={"seq": 3})
    assert str(e.value).startswith("dims['seq']=3: ")
    with pytest.raises(nnergy.InvalidInput) as e:
        nnergy.predict("resnet18", error=2.0, alpha=1.0)
    assert str(e.value).startswith("error=2: ")
    with pytest.raises(nnergy.InvalidInput) as e:
        nnergy.predict("resnet18", error=0.1, alpha=-1.0)
    assert str(e.value).startswith("alpha=-1: ")


def test_unknown_device_is_invalid_input_listing_the_devices():
    with pytest.raises(nnergy.InvalidInput) as e:
        nnergy.predict("resnet18", device="h1000")
    assert "h1000" in str(e.value) and "a100-40gb" in str(e.value)
    assert isinstance(e.value, nnergy.Error)


def test_an_object_that_is_no_model_is_refused():
    with pytest.raises(nnergy.InvalidInput) as e:
        nnergy.predict(42)
    assert str(e.value) == ("model: expected a zoo name (see nnergy.zoo()), the path of an .onnx "
                            "file or a torch.nn.Module, found builtins.int")


torch = pytest.importorskip("torch")


def tiny_mlp():
    return torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4))


def test_module_is_exported_with_a_dynamic_batch():
    p = nnergy.predict(tiny_mlp(), torch.randn(2, 16), device="h100", batch=64)
    # 64 × (16·32 + 32·4) multiply-accumulates, counted from the export.
    assert p.totals.mac_count == 64 * (16 * 32 + 32 * 4)
    # The network's layers (a host-bound iteration adds a HostLaunchWait row after them).
    assert list(p.layers["op_type"])[:3] == ["Gemm", "Relu", "Gemm"]
    # Without batch=, the example's batch is used.
    assert nnergy.predict(tiny_mlp(), torch.randn(3, 16)).totals.mac_count == 3 * 640


def test_module_in_training_mode_keeps_batchnorm():
    model = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3), torch.nn.BatchNorm2d(8),
                                torch.nn.ReLU())
    p = nnergy.predict(model, torch.randn(1, 3, 16, 16), batch=4, mode="training",
                       precision="bf16")
    assert "BatchNormalization" in set(p.layers["op_type"])
    assert p.totals.energy_j > 0
    assert p.clock_sweep().energy_optimal_clock_mhz > 0  # the export outlives the call


class Unexportable(torch.nn.Module):
    def forward(self, x):
        return torch.fft.rfft(x).abs()


def test_a_module_that_cannot_be_exported_is_invalid_input():
    with pytest.raises(nnergy.InvalidInput) as e:
        nnergy.predict(Unexportable(), torch.randn(2, 8))
    assert "torch.onnx.export" in str(e.value) and "Unexportable" in str(e.value)


def test_a_module_needs_an_example_input():
    with pytest.raises(nnergy.InvalidInput) as e:
        nnergy.predict(tiny_mlp())
    assert str(e.value).startswith("example_input: expected a torch.Tensor")
