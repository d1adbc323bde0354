#!/usr/bin/env python3
"""Crash safety: nnergy killed with SIGKILL at random moments loses and duplicates nothing.

    python3 tests/cli/kill_loop_test.py --nnergy build/.../nnergy [--kills N] [--seed S]

1. `nnergy profile` (CPU, alexnet, inference) killed N times at random moments, resumed each
   time: after every kill the SQLite dataset passes `PRAGMA integrity_check`, every row seen
   before is still there unchanged, no (operation, mode, dtype, clock) has two "ok" rows; the
   last run completes, and its operations are exactly those of an uninterrupted run.
2. `nnergy monitor -o trace.csv` killed N times: `trace.csv` never exists (it appears only when a
   run finishes); `trace.csv.partial` holds the header and every sample written, all complete
   but possibly the last, with increasing times, and nnergy reads it back (`--source replay:`).
3. Atomic writers: `nnergy predict --html` and `nnergy account --output --csv` killed N
   times each at random moments: each output is either absent or complete (the JSON parses, the
   HTML ends with </html>, the CSV ends with a newline), never half written.

Exit status 0 when every check passes, 1 naming the first that failed. Seeded (--seed), so that
a failure can be replayed.
"""

import argparse
import contextlib
import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def fail(message):
    print(f"kill_loop_test: FAILED: {message}", file=sys.stderr)
    sys.exit(1)


def run_and_kill(command, after_s, cwd):
    """Starts `command` in its own process group and kills the group after `after_s` seconds
    (unless it finished first). Returns the exit code (negative: killed)."""
    with tempfile.TemporaryFile() as stderr:
        process = subprocess.Popen(command, cwd=cwd, stdout=subprocess.DEVNULL, stderr=stderr,
                                   start_new_session=True)
        try:
            rc = process.wait(timeout=after_s)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            rc = process.wait()
        if rc > 0:
            stderr.seek(0)
            print(stderr.read().decode(errors="replace")[-2000:], file=sys.stderr)
        return rc


def dataset_rows(path):
    # closing(): a connection's `with` only ends a transaction; an open connection would keep the
    # file's -wal and -shm alive.
    with contextlib.closing(sqlite3.connect(path)) as db:
        check = db.execute("PRAGMA integrity_check").fetchone()[0]
        if check != "ok":
            fail(f"{path}: integrity_check says {check}")
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if "measurements" not in tables:
            return {}
        rows = db.execute("SELECT m.id, o.signature, m.mode, m.dtype, m.clock_mhz, m.status, "
                          "m.time_s FROM measurements m JOIN ops o ON o.id = m.op_id").fetchall()
    return {r[0]: r[1:] for r in rows}


def ok_keys(rows):
    keys = [r[:4] for r in rows.values() if r[4] == "ok"]
    return keys


def check_profile(nnergy, work, kills, rng):
    command = [nnergy, "profile", "--models", "alexnet", "--min-time-s", "0.01", "--repeats",
               "1", "--threads", "1"]
    reference = work / "reference.sqlite"
    start = time.monotonic()
    first = subprocess.run(command + ["--db", str(reference)], stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, text=True)
    if first.returncode != 0 and "LibTorch" in first.stderr:
        print("profile: skipped (this nnergy was built without LibTorch)")
        return
    if first.returncode != 0:
        fail(f"the uninterrupted profile run failed: {first.stderr.strip()[-2000:]}")
    full_s = time.monotonic() - start
    expected = sorted(ok_keys(dataset_rows(reference)))
    if not expected:
        fail("the uninterrupted profile run measured nothing")

    db = work / "killed.sqlite"
    seen = {}
    killed = 0
    for i in range(kills):
        rc = run_and_kill(command + ["--db", str(db)], rng.uniform(0.3, 0.8 * full_s), work)
        killed += rc < 0
        if rc > 0:
            fail(f"profile run {i} exited {rc} (not killed, not finished)")
        if not db.exists():
            continue  # killed before the dataset was created
        if rc == 0:  # the resumed run finished: start again, so that the next kills hit a run
            if sorted(ok_keys(dataset_rows(db))) != expected:
                fail(f"profile run {i} finished with other measurements than an uninterrupted run")
            for suffix in ("", "-wal", "-shm"):
                Path(str(db) + suffix).unlink(missing_ok=True)
            seen = {}
            continue
        rows = dataset_rows(db)
        for row_id, row in seen.items():
            if rows.get(row_id) != row:
                fail(f"after kill {i}: measurement {row_id} {row} was lost or changed")
        keys = ok_keys(rows)
        if len(keys) != len(set(keys)):
            fail(f"after kill {i}: duplicate measurements {sorted(k for k in keys if keys.count(k) > 1)}")
        seen = rows
    final_run = subprocess.run(command + ["--db", str(db)], stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True)
    if final_run.returncode != 0:
        fail(f"the final, resumed profile run failed (exit {final_run.returncode}): "
             f"{final_run.stderr.strip()[-2000:]}")
    final = sorted(ok_keys(dataset_rows(db)))
    if final != expected:
        fail(f"resumed dataset has {len(final)} measurements, an uninterrupted run {len(expected)}: "
             f"missing {sorted(set(expected) - set(final))}, extra {sorted(set(final) - set(expected))}")
    print(f"profile: {kills} runs ({killed} killed mid-run, uninterrupted run {full_s:.1f} s): "
          f"dataset intact after each; resumed to the same {len(expected)} measurements")


def has_a_sample(path):
    """True when the trace at `path` has its header and at least one whole sample line."""
    if not path.exists():
        return False
    lines = path.read_bytes().split(b"\n")
    header = next((n for n, line in enumerate(lines) if line.startswith(b"source,")), None)
    return header is not None and len(lines) > header + 2


def run_until_sample_then_kill(command, path, after_s, cwd):
    """Starts `command` in its own process group, waits (up to 60 s) until the trace at `path`
    holds a first sample, then kills the group after `after_s` more seconds: a loaded machine may
    take long to start the process, and a kill before its first sample tests nothing. Returns the
    exit code (negative: killed)."""
    process = subprocess.Popen(command, cwd=cwd, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + 60
    while process.poll() is None and time.monotonic() < deadline and not has_a_sample(path):
        time.sleep(0.01)
    try:
        return process.wait(timeout=after_s)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        return process.wait()


def check_monitor(nnergy, work, kills, rng):
    total_rows = 0
    for i in range(kills):
        out = work / f"monitor{i}.csv"
        partial = Path(str(out) + ".partial")
        rc = run_until_sample_then_kill(
            [nnergy, "monitor", "-o", str(out), "--source", "synthetic:constant=100",
             "--interval-ms", "2", "--", "sleep", "30"], partial, rng.uniform(0.05, 1.2), work)
        if rc >= 0:
            fail(f"monitor run {i} was not killed (exit {rc})")
        if out.exists():
            fail(f"monitor run {i}: {out.name} exists after SIGKILL (only a finished run may write it)")
        if not partial.exists():
            fail(f"monitor run {i}: no {partial.name}: the samples up to the kill are lost")
        lines = partial.read_bytes().split(b"\n")
        header = next((n for n, line in enumerate(lines) if line.startswith(b"source,")), None)
        if header is None:
            fail(f"monitor run {i}: {partial.name} has no header")
        fields = lines[header].count(b",")
        complete = lines[header + 1:-1]  # the last element follows the last newline
        times = []
        for n, line in enumerate(complete):
            if line.count(b",") != fields:
                fail(f"monitor run {i}: {partial.name}: data line {n + 1} is incomplete: {line!r}")
            times.append(float(line.split(b",")[1]))
        if not times or any(b <= a for a, b in zip(times, times[1:])):
            fail(f"monitor run {i}: {partial.name}: no samples, or times not increasing")
        replay = subprocess.run([nnergy, "monitor", "--source", f"replay:{partial}", "--", "true"],
                                capture_output=True, text=True)
        if replay.returncode != 0:
            fail(f"monitor run {i}: nnergy cannot read {partial.name} back: {replay.stderr.strip()}")
        total_rows += len(times)
    print(f"monitor -o: {kills} runs killed: no final file, every .partial readable "
          f"({total_rows} complete samples in all)")


def check_atomic_writers(nnergy, repo, work, kills, rng):
    jobs = {
        "predict": ([nnergy, "predict", "resnet50", "--sweep-clocks"], {"html": ".html"}),
        "account": ([nnergy, "account", str(repo / "tests/fixtures/account/resnet18_cpu")],
                    {"output": ".json", "csv": ".csv"}),
    }
    for name, (command, outputs) in jobs.items():
        start = time.monotonic()
        probe = [a for flag, ext in outputs.items() for a in (f"--{flag}", str(work / f"probe{ext}"))]
        subprocess.run(command + probe, cwd=repo, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        full_s = time.monotonic() - start
        written = 0
        for i in range(kills):
            paths = {flag: work / f"{name}{i}{ext}" for flag, ext in outputs.items()}
            args = [a for flag, p in paths.items() for a in (f"--{flag}", str(p))]
            run_and_kill(command + args, rng.uniform(0.3 * full_s, 1.2 * full_s), repo)
            for flag, path in paths.items():
                if not path.exists():
                    continue
                written += 1
                data = path.read_bytes()
                if flag == "output":
                    try:
                        json.loads(data)
                    except ValueError as e:
                        fail(f"{name} run {i}: {path.name} is half written ({e})")
                elif flag == "html" and not data.rstrip().endswith(b"</html>"):
                    fail(f"{name} run {i}: {path.name} is half written (no </html> at the end)")
                elif flag == "csv" and not data.endswith(b"\n"):
                    fail(f"{name} run {i}: {path.name} is half written (no newline at the end)")
        print(f"{name}: {kills} runs killed at random (whole run {full_s:.2f} s): {written} files "
              f"written, all complete, none half written")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nnergy", required=True)
    parser.add_argument("--repo", default=str(Path(__file__).resolve().parents[2]))
    parser.add_argument("--kills", type=int, default=8)
    parser.add_argument("--seed", type=int, default=20261124)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    nnergy = str(Path(args.nnergy).resolve())
    repo = Path(args.repo).resolve()
    with tempfile.TemporaryDirectory(prefix="nnergy-kill-") as tmp:
        work = Path(tmp)
        check_profile(nnergy, work, args.kills, rng)
        check_monitor(nnergy, work, args.kills, rng)
        check_atomic_writers(nnergy, repo, work, args.kills * 2, rng)
    print(f"kill_loop_test: all passed (seed {args.seed})")


if __name__ == "__main__":
    main()
