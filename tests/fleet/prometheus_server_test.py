"""Prometheus 2.42 scrapes `nnergy exporter` over a synthetic 250 W source; the power Prometheus
derives with rate() over the energy counter must be 250 W within 1 %. Prints the start-up times."""

import argparse
import subprocess
import tempfile
import time

from fleet_services import (Exporter, Prometheus, TestFailure, free_port, http_get, run_main,
                            wait_until)

SOURCE_W = 250.0
TOLERANCE = 0.01
WINDOW_S = 5


def check_refusals(nnergy, port_in_use):
    """Bad listen addresses: exit 2, one line on stderr naming --listen, nothing on stdout."""
    for listen in (f"127.0.0.1:{port_in_use}", "nonsense", "10.255.255.254:9464"):
        run = subprocess.run([nnergy, "exporter", "--listen", listen, "--source",
                              "synthetic:constant=1", "--duration-s", "1"],
                             capture_output=True, text=True, timeout=30)
        lines = run.stderr.strip().splitlines()
        if run.returncode != 2 or run.stdout or len(lines) != 1 or "--listen" not in lines[0]:
            raise TestFailure(f"nnergy exporter --listen {listen}: exit {run.returncode}, "
                              f"stdout {run.stdout!r}, stderr {run.stderr!r}")


def check_monitor(nnergy):
    """`nnergy monitor --prometheus ADDR -- sleep 3` serves the same counter while the command
    runs (about 250 W between two scrapes), and stops serving when it ends."""
    port = free_port()
    monitor = subprocess.Popen([nnergy, "monitor", "--prometheus", f"127.0.0.1:{port}",
                                "--source", f"synthetic:constant={SOURCE_W:g}", "--interval-ms",
                                "10", "--", "sleep", "3"], stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True)
    url = f"http://127.0.0.1:{port}/metrics"

    def energy():
        status, body = http_get(url)
        for line in body.splitlines() if status == 200 else []:
            if line.startswith('nnergy_gpu_energy_joules_total{gpu="synthetic"'):
                return time.monotonic(), float(line.rsplit(" ", 1)[1])
        return None
    t0, e0 = wait_until("monitor --prometheus serving", energy, 10, monitor)
    time.sleep(1)
    t1, e1 = energy()
    watts = (e1 - e0) / (t1 - t0)
    _, report = monitor.communicate(timeout=30)
    print(f"monitor --prometheus: {watts:.1f} W between two scrapes")
    if abs(watts / SOURCE_W - 1) > 0.05:
        raise TestFailure(f"monitor --prometheus: {watts} W between scrapes, expected {SOURCE_W}")
    if monitor.returncode != 0 or f"served at {url}" not in report:
        raise TestFailure(f"monitor --prometheus exited {monitor.returncode}: {report}")
    if http_get(url)[0] is not None:
        raise TestFailure(f"{url} still answers after the monitored command ended")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--nnergy", required=True)
    args = parser.parse_args()
    began = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="nnergy_prometheus_") as workdir:
        exporter = Exporter(args.nnergy, ["--source", f"synthetic:constant={SOURCE_W:g}",
                                          "--interval-ms", "10"])
        prometheus = None
        try:
            status, body = http_get(exporter.url)
            if status != 200 or "nnergy_gpu_energy_joules_total" not in body:
                raise TestFailure(f"GET {exporter.url}: status {status}, body:\n{body[:2000]}")
            exporter_up_s = time.monotonic() - began
            check_refusals(args.nnergy, exporter.port)
            check_monitor(args.nnergy)
            prometheus = Prometheus(workdir, [f"127.0.0.1:{exporter.port}"])
            ready_s = time.monotonic() - began
            series = 'nnergy_gpu_energy_joules_total{gpu="synthetic"}'
            query = f"rate({series}[{WINDOW_S}s])"
            # rate() extrapolates a window that its samples do not fill only by half a scrape
            # interval, which biases it low: wait until the window holds a scrape each second
            # (the first comes about 5 s after start-up).
            full = f"count_over_time({series}[{WINDOW_S}s]) >= {WINDOW_S}"
            wait_until(f"{WINDOW_S} scrapes in the window", lambda: prometheus.query(full), 40,
                       prometheus.process, prometheus.log)
            result = prometheus.query(query)
            if not result:
                raise TestFailure(f"{query}: no value")
            first_rate_s = time.monotonic() - began
            labels, watts = result[0]
            print(f"exporter serving after {exporter_up_s:.2f} s; Prometheus ready after "
                  f"{ready_s:.2f} s; first rate() after {first_rate_s:.2f} s")
            print(f"Prometheus rate(): {watts:.3f} W for a {SOURCE_W:g} W source "
                  f"({100 * (watts / SOURCE_W - 1):+.3f} %); labels {labels}")
            if abs(watts / SOURCE_W - 1) > TOLERANCE:
                raise TestFailure(f"{query} = {watts} W, expected {SOURCE_W} W within "
                                  f"{100 * TOLERANCE:g} %")
            up = prometheus.query('nnergy_source_up{source="synthetic"}')
            if not up or up[0][1] != 1:
                raise TestFailure(f"nnergy_source_up of the synthetic source: {up}")
        finally:
            if prometheus:
                prometheus.stop()
            code, summary = exporter.stop()
        if code != 0 or "Scrapes" not in summary:
            raise TestFailure(f"nnergy exporter exited with {code} after SIGTERM:\n{summary}")
    print(f"test time {time.monotonic() - began:.2f} s")


run_main(main)
