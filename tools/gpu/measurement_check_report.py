#!/usr/bin/env python3
"""Compares the power readings of tools/gpu/measurement_check.sh, per load phase.

    tools/gpu/measurement_check_report.py CHECK_DIR

Reads CHECK_DIR/nnergy_nvml.csv (`nnergy monitor -o`, NVML every 20 ms: the energy counter and
the instantaneous power), CHECK_DIR/smi.csv (`nvidia-smi -lms 100`: power.draw,
power.draw.average, power.draw.instant) and CHECK_DIR/load.log (the phases' UNIX times), and
prints a Markdown table: energy of each phase by the counter (interpolated between its updates),
by the integral of NVML's instantaneous power, and by the integrals of nvidia-smi's three power
fields, each as a ratio to the counter; then how often the counter and the power fields change.
"""

import csv
import datetime
import sys


def read_nnergy(path):
    rows = []
    with open(path) as f:
        lines = [line for line in f if not line.startswith("#")]
    for r in csv.DictReader(lines):
        rows.append((float(r["epoch_s"]), float(r["power_w"]), float(r["energy_j"])))
    return rows


def read_smi(path):
    out = {"t": [], "power.draw": [], "power.draw.average": [], "power.draw.instant": []}
    with open(path) as f:
        reader = csv.reader(f, skipinitialspace=True)
        header = next(reader)
        names = [h.split(" [")[0] for h in header]
        for row in reader:
            if len(row) != len(names):
                continue
            rec = dict(zip(names, row))
            # nvidia-smi prints local time; the machine runs in UTC.
            t = datetime.datetime.strptime(rec["timestamp"], "%Y/%m/%d %H:%M:%S.%f")
            out["t"].append(t.replace(tzinfo=datetime.timezone.utc).timestamp())
            for k in ("power.draw", "power.draw.average", "power.draw.instant"):
                v = rec.get(k, "")
                out[k].append(float(v.split()[0]) if v and v[0].isdigit() else float("nan"))
    return out


def read_phases(path):
    phases, starts = [], {}
    with open(path) as f:
        for line in f:
            p = line.split()
            if len(p) >= 4 and p[0] == "phase":
                if p[2] == "start_unix_s":
                    starts[p[1]] = float(p[3])
                elif p[2] == "end_unix_s":
                    phases.append((p[1], starts[p[1]], float(p[3])))
    return phases


def integral(ts, vs, t0, t1):
    """Integral of the step function holding each sample until the next one, over [t0, t1]."""
    total = 0.0
    for i in range(len(ts) - 1):
        a, b = max(ts[i], t0), min(ts[i + 1], t1)
        if b > a and vs[i] == vs[i]:
            total += vs[i] * (b - a)
    return total


def counter_at(rows, t):
    """The energy counter at UNIX time t, interpolated between the times it changed."""
    changes = [rows[0]]
    for r in rows[1:]:
        if r[2] != changes[-1][2]:
            changes.append(r)
    for a, b in zip(changes, changes[1:]):
        if a[0] <= t <= b[0]:
            return a[2] + (t - a[0]) / (b[0] - a[0]) * (b[2] - a[2])
    return changes[0][2] if t < changes[0][0] else changes[-1][2]


def change_period_ms(ts, vs):
    changes = [t for i, t in enumerate(ts) if i and vs[i] != vs[i - 1]]
    gaps = sorted(b - a for a, b in zip(changes, changes[1:]))
    return gaps[len(gaps) // 2] * 1e3 if gaps else float("nan")


def main(d):
    nn = read_nnergy(f"{d}/nnergy_nvml.csv")
    smi = read_smi(f"{d}/smi.csv")
    phases = read_phases(f"{d}/load.log")
    phases.append(("whole load", phases[0][1], phases[-1][2]))
    ts = [r[0] for r in nn]
    pw = [r[1] for r in nn]
    print("| phase | s | counter J | NVML instant ∫ | smi power.draw ∫ | smi .average ∫ "
          "| smi .instant ∫ | mean W (counter) |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for name, t0, t1 in phases:
        e = counter_at(nn, t1) - counter_at(nn, t0)
        cells = [integral(ts, pw, t0, t1)]
        for k in ("power.draw", "power.draw.average", "power.draw.instant"):
            cells.append(integral(smi["t"], smi[k], t0, t1))
        ratios = " | ".join(f"{c / e:.3f}" for c in cells)
        print(f"| {name} | {t1 - t0:.1f} | {e:.0f} | {ratios} | {e / (t1 - t0):.0f} |")
    print()
    print(f"NVML energy counter: changes every {change_period_ms(ts, [r[2] for r in nn]):.0f} ms "
          f"(median); NVML power (as nnergy reads it): every {change_period_ms(ts, pw):.0f} ms")
    for k in ("power.draw", "power.draw.average", "power.draw.instant"):
        print(f"nvidia-smi {k}: changes every {change_period_ms(smi['t'], smi[k]):.0f} ms (median, "
              "sampled every 100 ms)")


if __name__ == "__main__":
    main(sys.argv[1])
