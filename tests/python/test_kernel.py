"""nnergy.kernel: the figures of `nnergy kernel` as Python objects."""

import json
import subprocess

import pytest

import nnergy


def test_a_gemm_matches_the_cli_json():
    g = nnergy.kernel("gemm", m=8192, n=16384, k=16384, device="b200")
    t = g.totals
    assert t.energy_j == pytest.approx(t.time_s * t.avg_power_w, rel=1e-9)
    assert t.time_std_s > 0
    assert g.device["id"] == "b200" and g.format == "bf16" and g.engine == "tensorrt-llm"
    cli = subprocess.run(
        [nnergy._core.cli_path, "kernel", "gemm", "--m", "8192", "--n", "16384", "--k", "16384",
         "--device", "b200", "--json"], check=True, capture_output=True, text=True)
    assert json.loads(cli.stdout)["totals"]["time_s"] == pytest.approx(t.time_s, rel=1e-12)
    assert "us" in repr(g)


def test_attention_prefill_and_decode():
    prefill = nnergy.kernel("attention", seq=8192, heads=64, kv_heads=8, device="h100")
    decode = nnergy.kernel("attention", phase="decode", batch=64, seq=4095, device="h200",
                           kv_precision="fp8")
    assert prefill.shape["queries"] == 8192
    assert decode.shape["queries"] == 1 and decode.format == "bf16/fp8"
    assert decode.bound in ("memory", "power cap", "latency", "compute")
    assert any("Attention time" in n for n in decode.notes)


def test_a_collective():
    c = nnergy.kernel("all-reduce", bytes=64 << 20, gpus=8, device="h100")
    assert c.bound in ("link", "latency")
    assert c.shape["gpus"] == 8
    with pytest.raises(nnergy.InvalidInput, match="gpus=16"):
        nnergy.kernel("all-reduce", bytes=4096, gpus=16, device="h100")


def test_a_moe_layer():
    m = nnergy.kernel("moe", tokens=4096, hidden=4096, inter=14336, topk=2, experts=8,
                      device="h200")
    assert m.shape["active_experts"] == 8
    assert m.totals.time_s > 0 and m.totals.energy_j > 0
    assert any("MoE layer time" in n for n in m.notes)
    with pytest.raises(nnergy.InvalidInput, match="ep 3"):
        nnergy.kernel("moe", tokens=16, hidden=4096, inter=14336, topk=2, experts=8, ep=3,
                      device="h200")
    with pytest.raises(nnergy.InvalidInput, match="experts: required"):
        nnergy.kernel("moe", tokens=16, hidden=4096, inter=14336, topk=2, device="h200")


def test_bad_arguments_raise_invalid_input_naming_them():
    with pytest.raises(nnergy.InvalidInput, match="kv_heads 6"):
        nnergy.kernel("attention", seq=100, heads=32, kv_heads=6, device="h100")
    with pytest.raises(nnergy.InvalidInput, match="precision fp9"):
        nnergy.kernel("gemm", m=8, n=8, k=8, precision="fp9", device="h100")
    with pytest.raises(nnergy.InvalidInput, match="m, k: required"):
        nnergy.kernel("gemm", n=8, device="h100")
    with pytest.raises(nnergy.InvalidInput, match="'conv'"):
        nnergy.kernel("conv", device="h100")
