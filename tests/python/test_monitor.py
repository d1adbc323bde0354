"""nnergy.Monitor, @nnergy.measure and nnergy.EnergyLogger with synthetic power sources."""

import csv
import json
import threading
import time

import pytest

import nnergy


def test_constant_250_w_for_2_s_is_500_j():
    with nnergy.Monitor("synthetic:constant=250", interval_ms=10) as mon:
        time.sleep(2.0)
    m = mon.result
    assert 2.0 <= m.time_s < 2.2
    # The synthetic counter is the exact integral: 250 W × the window's length.
    assert m.energy_j["synthetic"] == pytest.approx(250 * m.time_s, rel=0.01)
    assert m.energy_j["synthetic"] == pytest.approx(500, rel=0.05)
    assert m.power_w["synthetic"] == pytest.approx(250)
    assert m.peak_power_w["synthetic"] == pytest.approx(250)
    assert m.to_dict()["sources"][0]["energy_method"] == "counter"
    assert list(m.table["id"]) == ["synthetic"]


def test_nested_and_overlapping_windows_from_threads():
    mon = nnergy.Monitor(["synthetic:constant=100"], interval_ms=5)
    epoch = mon.begin_window("epoch")
    results = {}

    def worker(i):
        with mon.window(f"w{i}") as w:
            time.sleep(0.05 * (i + 1))
        results[i] = w.result

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    whole = mon.end_window(epoch)
    mon.close()
    for i, m in results.items():
        assert m.name == f"w{i}"
        assert m.time_s >= 0.05 * (i + 1)
        assert m.energy_j["synthetic"] == pytest.approx(100 * m.time_s, rel=0.01)
        assert whole.begin_s <= m.begin_s and m.end_s <= whole.end_s


def test_windows_end_by_name_and_misuse_is_invalid_input():
    mon = nnergy.Monitor("synthetic:constant=10", interval_ms=5)
    mon.begin_window("epoch")
    mon.begin_window("step")
    assert mon.end_window("step").name == "step"
    with pytest.raises(nnergy.InvalidInput) as e:
        mon.end_window("step")
    assert str(e.value) == "end window 'step': no window of that name is open (open: 'epoch')"
    w = mon.begin_window("once")
    w.end()
    with pytest.raises(nnergy.InvalidInput, match="already closed"):
        mon.end_window(w)
    mon.close()


def test_absent_or_malformed_sources():
    with pytest.raises(nnergy.DeviceError) as e:
        nnergy.Monitor("nvml")  # conftest hides the machine's NVML
    assert str(e.value).startswith("source=nvml: the power source is not available here")
    with pytest.raises(nnergy.InvalidInput) as e:
        nnergy.Monitor("synthetic:constant=abc")
    assert str(e.value).startswith("source=synthetic:constant=abc: "), str(e.value)
    with pytest.raises(nnergy.InvalidInput, match=r"interval_ms=0\.5: expected 1 to 60000"):
        nnergy.Monitor("synthetic:constant=1", interval_ms=0.5)


def test_measure_decorator():
    seen = []

    @nnergy.measure(sources="synthetic:constant=40", interval_ms=5, on_measurement=seen.append)
    def work(seconds):
        time.sleep(seconds)
        return "done"

    assert work(0.1) == "done"
    m = work.last_measurement
    assert seen == [m] and m.name.endswith("work")
    assert m.energy_j["synthetic"] == pytest.approx(40 * m.time_s, rel=0.01)


def test_energy_logger_writes_steps_and_epochs(tmp_path):
    path = tmp_path / "energy.csv"
    with nnergy.EnergyLogger(path, grid_g_per_kwh=400, sources="synthetic:constant=360",
                             interval_ms=5) as logger:
        for _ in range(2):
            with logger.epoch():
                for _ in range(3):
                    with logger.step(samples=8):
                        time.sleep(0.02)
            with open(path) as f:  # written as the run goes
                assert sum(1 for _ in f) == 1 + 4 * (logger.epoch_index)
    rows = list(csv.DictReader(open(path)))
    assert [r["kind"] for r in rows] == ["step"] * 3 + ["epoch"] + ["step"] * 3 + ["epoch"]
    for r in rows:
        energy = float(r["energy_j"])
        assert energy == pytest.approx(360 * float(r["time_s"]), rel=0.01)
        assert float(r["energy_kwh"]) == pytest.approx(energy / 3.6e6)
        assert float(r["co2e_g"]) == pytest.approx(energy / 3.6e6 * 400)
        assert float(r["energy_j:synthetic"]) == pytest.approx(energy)
    assert rows[3]["samples"] == "24"
    assert logger.total_energy_j == pytest.approx(
        sum(float(r["energy_j"]) for r in rows if r["kind"] == "epoch"))


def test_energy_logger_json_lines(tmp_path):
    path = tmp_path / "energy.jsonl"
    logger = nnergy.EnergyLogger(path, sources="synthetic:constant=1", log_steps=False)
    logger.begin_epoch()
    logger.begin_step()
    logger.end_step()
    row = logger.end_epoch()
    logger.close()
    assert [json.loads(line) for line in open(path)] == [row]
    with pytest.raises(nnergy.InvalidInput, match="grid_g_per_kwh=-1"):
        nnergy.EnergyLogger(tmp_path / "x.csv", grid_g_per_kwh=-1)


def test_energy_logger_grid_keyword_is_monitors(tmp_path):
    """grid_gco2e_per_kwh is `nnergy monitor --grid-gco2e-per-kwh`; the older grid_g_per_kwh is
    the same setting, and naming both is refused."""
    with nnergy.EnergyLogger(tmp_path / "a.csv", grid_gco2e_per_kwh=100,
                             sources="synthetic:constant=360", interval_ms=5) as logger:
        with logger.epoch():
            with logger.step():
                time.sleep(0.02)
    assert logger.grid_gco2e_per_kwh == logger.grid_g_per_kwh == 100
    assert logger.total_kwh > 0
    assert logger.total_co2e_g == pytest.approx(logger.total_kwh * 100)
    with nnergy.EnergyLogger(tmp_path / "b.csv", sources="synthetic:constant=1") as default:
        assert default.grid_gco2e_per_kwh == nnergy._core.default_grid_gco2e_per_kwh == 481
    with pytest.raises(nnergy.InvalidInput, match="grid_gco2e_per_kwh=-1"):
        nnergy.EnergyLogger(tmp_path / "c.csv", grid_gco2e_per_kwh=-1)
    with pytest.raises(nnergy.InvalidInput, match="one setting under two names"):
        nnergy.EnergyLogger(tmp_path / "d.csv", grid_gco2e_per_kwh=1, grid_g_per_kwh=2)
