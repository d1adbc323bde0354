"""nnergy.EnergyLogger pushes a training run's energy to a real Prometheus Pushgateway (1.5) after
every epoch: the pushed counters equal the epochs' rows (a synthetic 300 W source); a Pushgateway
that is down warns and training goes on; a malformed address is InvalidInput."""

import argparse
import os
import tempfile
import time
import warnings

from fleet_services import Pushgateway, TestFailure, free_port, http_get, run_main

SOURCE_W = 300.0


def pushed(address, name):
    """{labels text: value} of metric `name` on the Pushgateway."""
    status, body = http_get(f"http://{address}/metrics")
    values = {}
    for line in body.splitlines() if status == 200 else []:
        if line.startswith(name + "{") or line.startswith(name + " "):
            series, value = line.rsplit(" ", 1)
            values[series[len(name):]] = float(value)
    return values


def main():
    parser = argparse.ArgumentParser()
    parser.parse_args()
    import nnergy
    began = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="nnergy_pushgateway_") as work:
        gateway = Pushgateway(work)
        try:
            logger = nnergy.EnergyLogger(os.path.join(work, "energy.csv"),
                                         sources=f"synthetic:constant={SOURCE_W:g}",
                                         interval_ms=5, pushgateway=gateway.address,
                                         push_labels={"instance": "test-node/rack-1"})
            rows = []
            for epoch in range(2):
                with logger.epoch() as scope:
                    with logger.step(samples=4):
                        time.sleep(0.2)
                rows.append(scope.row)
                epochs = pushed(gateway.address, "nnergy_training_epochs_total")
                # A "/" in a label value stays in the value (base64-encoded on the way), not
                # extra labels.
                if list(epochs.values()) != [epoch + 1] or 'instance="test-node/rack-1"' not in \
                        next(iter(epochs)) or 'job="nnergy_energy_logger"' not in next(iter(epochs)):
                    raise TestFailure(f"after epoch {epoch}: nnergy_training_epochs_total {epochs}")
            logger.close()
            energy = pushed(gateway.address, "nnergy_training_energy_joules_total")
            expected = sum(r["energy_j"] for r in rows)
            values = list(energy.values())
            print(f"pushed {values} J for 2 epochs of rows summing to {expected:.3f} J "
                  f"({SOURCE_W:g} W x {sum(r['time_s'] for r in rows):.3f} s)")
            if len(values) != 1 or abs(values[0] - expected) > 1e-9 * expected:
                raise TestFailure(f"nnergy_training_energy_joules_total {energy}, expected "
                                  f"{expected} J")
            if abs(expected / (SOURCE_W * sum(r["time_s"] for r in rows)) - 1) > 0.01:
                raise TestFailure(f"{expected} J is not {SOURCE_W} W x the epochs' time")
        finally:
            gateway.stop()

        down = f"127.0.0.1:{free_port()}"
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            logger = nnergy.EnergyLogger(os.path.join(work, "down.csv"),
                                         sources="synthetic:constant=1", pushgateway=down)
            for _ in range(2):
                with logger.epoch():
                    pass
            logger.close()
        pushes = [w for w in caught if "push to" in str(w.message)]
        if len(pushes) != 1 or logger.epoch_index != 2:
            raise TestFailure(f"a Pushgateway that is down: {len(pushes)} warnings (expected one), "
                              f"{logger.epoch_index} epochs: {[str(w.message) for w in caught]}")
        try:
            nnergy.EnergyLogger(os.path.join(work, "bad.csv"), sources="synthetic:constant=1",
                                pushgateway="nonsense")
            raise TestFailure("pushgateway='nonsense' was accepted")
        except nnergy.InvalidInput as e:
            if "pushgateway='nonsense'" not in str(e):
                raise TestFailure(f"pushgateway='nonsense': {e}")
    print(f"test time {time.monotonic() - began:.2f} s")


run_main(main)
