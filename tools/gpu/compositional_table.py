#!/usr/bin/env python3
"""Whole-network time measured in a loop vs the sum of its operators measured one by one.

    tools/gpu/compositional_table.py OPS.sqlite CAMPAIGN.jsonl [CAMPAIGN.jsonl ...]

For every network of the operator dataset (`nnergy profile`) whose measured operators cover every
operator `nnergy profile` measures (the whitelist; the others are listed as not measured), sums
count × time of its operators per dtype and mode, and compares that with the whole-network time
per iteration of tools/gpu/network_campaign.py at the same batch, precision and mode. Prints a
Markdown table. (The dataset's own whole-network rows, `nnergy dataset validate`, are used when
present; the campaign's runs stand in for them when the profile ran out of time before them.)
"""

import json
import sqlite3
import sys


def main(db, campaigns):
    runs = {}
    for path in campaigns:
        with open(path) as f:
            for r in map(json.loads, f):
                if "error" not in r:
                    runs[(r["network"], r["precision"], r["mode"], r["batch"])] = r
    c = sqlite3.connect(db)
    nets = c.execute("select id, name, inputs_json from networks").fetchall()
    print("| network | dtype | mode | batch | ops measured / in network | sum of ops ms | network ms "
          "| sum / network |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for net_id, name, inputs in nets:
        batch = json.loads(inputs)[0]["shape"][0]
        whitelisted = c.execute(
            "select count(*), sum(no.count) from network_ops no join ops o on o.id = no.op_id "
            "where no.network_id = ? and o.whitelisted = 1", (net_id,)).fetchone()
        for dtype, mode in c.execute(
                "select distinct m.dtype, m.mode from measurements m join network_ops no on "
                "no.op_id = m.op_id where no.network_id = ? order by 1, 2", (net_id,)).fetchall():
            measured, total_s = c.execute(
                "select count(*), sum(no.count * m.time_s) from network_ops no join measurements "
                "m on m.op_id = no.op_id where no.network_id = ? and m.dtype = ? and m.mode = ? "
                "and m.status = 'ok'", (net_id, dtype, mode)).fetchone()
            if measured < whitelisted[0]:
                continue  # incomplete: the campaign ran out of time inside this network
            run = runs.get((name, dtype, mode, batch))
            if run is None:
                continue
            net_ms = run["time_per_iteration_s"] * 1e3
            print(f"| {name} | {dtype} | {mode} | {batch} | {measured} / {whitelisted[0]} | "
                  f"{total_s * 1e3:.2f} | {net_ms:.2f} | {total_s * 1e3 / net_ms:.2f} |")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
