#!/usr/bin/python3
"""Load test of `nnergy exporter`: RATE scrapes per second of /metrics for DURATION seconds, paced
(open loop: a scrape starts every 1/RATE s whatever the previous ones took), each over a kept-alive
HTTP/1.1 connection of one of WORKERS threads, as Prometheus servers do. Reports the scrape
latency (median, p90, p99, max), the errors, the exporter's resident memory over the run, and
whether its counters ever went backwards; exits 1 on any error, a counter going backwards, or
memory growing by more than --max-rss-growth-mib.

    bench/exporter_load.py --nnergy build/ci/apps/nnergy/nnergy --rate 200 --duration 60 \
        -- --source synthetic:constant=250 --interval-ms 100

Arguments after `--` go to `nnergy exporter` (default: a synthetic 250 W source and, where the
fake NVML is given with --fake-nvml, its four GPUs)."""

import argparse
import http.client
import json
import os
import queue
import statistics
import subprocess
import sys
import threading
import time


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def counters(body):
    """{series: value} of every *_joules_total series in an exposition."""
    values = {}
    for line in body.splitlines():
        if line.startswith("nnergy_") and "_joules_total" in line.split(" ")[0].split("{")[0]:
            series, value = line.rsplit(" ", 1)
            values[series] = float(value)
    return values


def main():
    own = sys.argv[1:]
    exporter_args = []
    if "--" in own:
        exporter_args = own[own.index("--") + 1:]
        own = own[:own.index("--")]
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nnergy", required=True, help="the nnergy executable")
    parser.add_argument("--rate", type=float, default=200, help="scrapes per second")
    parser.add_argument("--duration", type=float, default=60, help="seconds of load")
    parser.add_argument("--workers", type=int, default=8, help="connections scraping in turn")
    parser.add_argument("--fake-nvml", help="libfake_nvml.so: also export its 4 GPUs")
    parser.add_argument("--max-rss-growth-mib", type=float, default=8.0)
    parser.add_argument("--json", help="write the results here as JSON")
    args = parser.parse_args(own)
    if not exporter_args:
        exporter_args = ["--source", "synthetic:constant=250", "--interval-ms", "100"]
    env = dict(os.environ)
    if args.fake_nvml:
        script = f"/tmp/nnergy_exporter_load_{os.getpid()}.nvml"
        with open(script, "w") as f:
            f.write("gpus 4\n" + "".join(
                f"energy_rate_mw {g} 300000\npower_mw {g} 300000\nclock_sm_mhz {g} 1410\n"
                f"clock_mem_mhz {g} 2619\ntemperature_c {g} 60\nreasons {g} 0\n" for g in range(4)))
        env.update(NNERGY_NVML_LIBRARY=args.fake_nvml, NNERGY_FAKE_NVML_SCRIPT=script)
        exporter_args += ["--source", "nvml"]

    exporter = subprocess.Popen([args.nnergy, "exporter", "--listen", "127.0.0.1:0",
                                 *exporter_args], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, env=env)
    line = exporter.stderr.readline()
    if "serving http://127.0.0.1:" not in line:
        sys.exit(f"exporter_load: nnergy exporter did not start: {line}{exporter.stderr.read()}")
    port = int(line.split("serving http://127.0.0.1:")[1].split("/")[0])

    latencies = []
    errors = []
    backwards = []
    lock = threading.Lock()
    work = queue.Queue()

    def worker():
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
        last = {}
        while True:
            due = work.get()
            if due is None:
                return
            start = time.monotonic()
            try:
                connection.request("GET", "/metrics")
                response = connection.getresponse()
                body = response.read().decode()
                elapsed = time.monotonic() - start
                if response.status != 200:
                    raise RuntimeError(f"status {response.status}")
                now = counters(body)
                with lock:
                    latencies.append(elapsed)
                    backwards.extend(s for s, v in now.items() if v < last.get(s, v))
                last = now
            except Exception as e:  # noqa: BLE001 - every failure is counted and reported
                with lock:
                    errors.append(repr(e))
                connection.close()
                connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)

    threads = [threading.Thread(target=worker) for _ in range(args.workers)]
    for t in threads:
        t.start()
    rss = [rss_kib(exporter.pid)]
    began = time.monotonic()
    count = int(args.rate * args.duration)
    next_rss = began + 1
    for i in range(count):
        due = began + i / args.rate
        delay = due - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        work.put(due)
        if time.monotonic() >= next_rss:
            rss.append(rss_kib(exporter.pid))
            next_rss += 1
    for _ in threads:
        work.put(None)
    for t in threads:
        t.join()
    wall = time.monotonic() - began
    rss.append(rss_kib(exporter.pid))
    exporter.terminate()
    exporter.wait(15)

    ordered = sorted(latencies)

    def quantile(q):
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")

    # Memory after the first 10 % of the run (allocator warm-up) against the end.
    settled = rss[max(1, len(rss) // 10)]
    result = {
        "scrapes": len(latencies), "errors": len(errors), "wall_s": wall,
        "achieved_rate_per_s": len(latencies) / wall,
        "latency_median_ms": 1e3 * statistics.median(ordered) if ordered else None,
        "latency_p90_ms": 1e3 * quantile(0.90), "latency_p99_ms": 1e3 * quantile(0.99),
        "latency_max_ms": 1e3 * ordered[-1] if ordered else None,
        "rss_start_kib": rss[0], "rss_settled_kib": settled, "rss_end_kib": rss[-1],
        "rss_max_kib": max(rss), "counters_went_backwards": len(backwards),
        "exporter_args": exporter_args,
    }
    print(json.dumps(result, indent=2))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=2)
    growth_mib = (rss[-1] - settled) / 1024
    failed = []
    if errors:
        failed.append(f"{len(errors)} failed scrapes, first: {errors[0]}")
    if backwards:
        failed.append(f"counters went backwards: {backwards[:3]}")
    if growth_mib > args.max_rss_growth_mib:
        failed.append(f"resident memory grew by {growth_mib:.1f} MiB after warm-up")
    if len(latencies) + len(errors) != count:
        failed.append(f"{count - len(latencies) - len(errors)} scrapes never ran")
    if failed:
        sys.exit("exporter_load: " + "; ".join(failed))


main()
