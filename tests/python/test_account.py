"""nnergy.session + nnergy.account: a tiny CPU model's training steps recorded and accounted."""

import json
import os

import pytest

import nnergy
from nnergy import _core

torch = pytest.importorskip("torch")


@pytest.fixture(scope="module")
def recorded_run(tmp_path_factory):
    if not os.path.exists(_core.cli_path):
        pytest.skip(f"the nnergy executable of this build ({_core.cli_path}) is not built")
    run = tmp_path_factory.mktemp("account") / "run1"
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.randn(8, 16)
    with nnergy.session(model, run, power_sources=["synthetic:constant=42"], interval_ms=2) as s:
        for _ in range(2):
            opt.zero_grad()
            model(x).sum().backward()
            opt.step()
            s.step()
    return run


def test_session_and_account_round_trip(recorded_run):
    session = json.loads((recorded_run / "session.json").read_text())
    assert session["steps"] == 2
    fp = nnergy.account(recorded_run)
    assert len(fp.runs) == 1 and fp.has_power
    by_op = fp.by_op
    assert any("Sequential.0/aten::addmm" in name for name in by_op["name"])
    device = fp.devices[0]
    # The constant 42 W gives 42 W × the busy time, all of it attributed.
    assert device["unmeasured_busy_time_s"] == 0
    assert device["attributed_energy_j"] == pytest.approx(42 * device["busy_time_s"], rel=1e-6)
    assert fp.edd["energy_j"] == pytest.approx(by_op["energy_j"].sum(), rel=1e-6)
    assert fp.by_layer["energy_j"].sum() == pytest.approx(fp.edd["energy_j"], rel=1e-6)
    hot = fp.hotspots(3)
    assert len(hot) <= 3 and list(hot["energy_j"]) == sorted(hot["energy_j"], reverse=True)
    assert "energy" in fp.text()


def test_account_errors():
    with pytest.raises(nnergy.InvalidInput):
        nnergy.account("/nonexistent/run")
    with pytest.raises(nnergy.InvalidInput) as e:
        nnergy.session(object(), "run")
    assert str(e.value).startswith("model: expected a torch.nn.Module")


def test_session_profiler_records_cuda_kernels_when_cuda_is_available(monkeypatch):
    """With CUDA available the session's profiler must record the GPU side: a Kineto trace of
    the CPU side alone has no kernel events and its GPU energy cannot be accounted."""
    import nnergy_torch

    calls = []

    def fake_profile(**kwargs):
        calls.append(kwargs)
        if "use_device" in kwargs and fake_profile.old_torch:
            raise TypeError("profile() got an unexpected keyword argument 'use_device'")
        return object()

    monkeypatch.setattr(torch.autograd.profiler, "profile", fake_profile)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    fake_profile.old_torch = False
    nnergy_torch._new_profiler()
    assert calls[-1] == {"use_device": "cuda"}
    fake_profile.old_torch = True
    nnergy_torch._new_profiler()
    assert calls[-1] == {"use_cuda": True}
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    nnergy_torch._new_profiler()
    assert calls[-1] == {}
