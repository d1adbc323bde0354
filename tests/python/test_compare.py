"""nnergy.compare: a DataFrame of devices, batches and clocks, the same figures as predict."""

import pytest

import nnergy


def test_compare_rows_match_predict_and_carry_provenance():
    df = nnergy.compare("resnet50", devices="a100-40gb,h100-sxm", batch=32)
    assert len(df) == 4
    assert set(df["clock"]) == {"boost", "energy-optimal"}
    assert {"time_per_sample_s", "energy_per_sample_j", "edp_j_s", "power_w", "pareto",
            "rank_energy", "time_model", "provenance", "fits_memory", "host_bound"} <= set(
        df.columns)
    boost = df[(df["device"] == "h100-sxm") & (df["clock"] == "boost")].iloc[0]
    p = nnergy.predict("resnet50", device="h100-sxm", batch=32)
    assert boost["time_s"] == pytest.approx(p.totals.time_s, rel=1e-12)
    assert boost["energy_per_sample_j"] == pytest.approx(p.totals.energy_j / 32, rel=1e-12)
    assert boost["time_model"] == "calibrated"  # Hopper: fitted on the H100 campaign
    assert any("not measured" in n or "analytical" in n for n in df.attrs["notes"])


def test_compare_batch_sweep_and_bad_arguments():
    df = nnergy.compare("resnet18", devices=["t4"], batches=[1, 64])
    assert sorted(set(df["batch"])) == [1, 64]
    with pytest.raises(nnergy.InvalidInput, match="batch and batches"):
        nnergy.compare("resnet18", batch=1, batches=[2])
    with pytest.raises(nnergy.InvalidInput, match="no-such-gpu"):
        nnergy.compare("resnet18", devices=["no-such-gpu"])
    with pytest.raises(nnergy.InvalidInput, match="batches=0"):
        nnergy.compare("resnet18", devices=["t4"], batches=[0])


def test_compare_a_module_uses_its_example_batch():
    torch = pytest.importorskip("torch")
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4))
    df = nnergy.compare(model, torch.randn(3, 16), devices=["l4", "a100"])
    assert set(df["batch"]) == {3}
    assert set(df["device"]) == {"l4", "a100-40gb"}
