#!/usr/bin/env bash
# Accounting at scale, end to end as a user runs it: whole `nnergy account --trace T --power P
# --json J` processes (read, hierarchy, sweep, footprints, JSON written) on synthetic Kineto and
# TF1 traces from bench/make_account_traces.py.
#   bench/account_scale.sh [NNERGY] [EVENTS] [RUNS]
#     NNERGY  the executable (default build/release/apps/nnergy/nnergy)
#     EVENTS  trace events per file (default 1000000)
#     RUNS    runs per trace, alternating the traces (default 5)
# Prints per trace the medians of wall and CPU (user + system) time, events per second of each,
# the peak resident set, and memory per event: (peak RSS - the RSS of the same command on a
# 60-event trace) / events. Needs /usr/bin/time (Debian package `time`) and python3.
set -euo pipefail
cd "$(dirname "$0")/.."
nnergy="${1:-build/release/apps/nnergy/nnergy}"
events="${2:-1000000}"
runs="${3:-5}"
[[ -x "$nnergy" ]] || { echo "account_scale.sh: no executable '$nnergy' (build it first)" >&2; exit 2; }
[[ -x /usr/bin/time ]] || { echo "account_scale.sh: needs /usr/bin/time (apt install time)" >&2; exit 2; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
python3 bench/make_account_traces.py "$work/big" "$events"
python3 bench/make_account_traces.py "$work/small" 60

# run DIR TRACE: one whole process; prints "wall_s cpu_s max_rss_kb".
run() {
  /usr/bin/time -f "%e %U %S %M" -o "$work/time.txt" \
    "$nnergy" account --trace "$1/$2.json" --power "$1/power.csv" -o "$work/out.json" \
    >/dev/null
  awk '{ printf "%s %.3f %s\n", $1, $2 + $3, $4 }' "$work/time.txt"
}

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

printf '%-7s %9s %8s %8s %8s %13s %13s %9s %11s\n' trace events "MB" wall_s cpu_s \
  "events/s wall" "events/s cpu" "peak MB" "B/event"
for trace in kineto tf; do : >"$work/$trace.runs"; done
for ((i = 0; i < runs; ++i)); do
  for trace in kineto tf; do run "$work/big" "$trace" >>"$work/$trace.runs"; done
done
for trace in kineto tf; do
  n="$(awk -v t="$trace" '$1 == t { print $2 }' "$work/big/counts.txt")"
  mb="$(du -m --apparent-size "$work/big/$trace.json" | cut -f1)"
  wall="$(cut -d' ' -f1 "$work/$trace.runs" | median)"
  cpu="$(cut -d' ' -f2 "$work/$trace.runs" | median)"
  rss="$(cut -d' ' -f3 "$work/$trace.runs" | median)"
  base="$(run "$work/small" "$trace" | cut -d' ' -f3)"
  awk -v t="$trace" -v n="$n" -v mb="$mb" -v w="$wall" -v c="$cpu" -v r="$rss" -v b="$base" \
    'BEGIN { printf "%-7s %9d %8d %8.3f %8.3f %13.0f %13.0f %9.1f %11.0f\n", t, n, mb, w, c, n / w, n / c, r / 1024, (r - b) * 1024 / n }'
done
echo "(medians of $runs runs; $(nproc) CPUs; load average $(cut -d' ' -f1-3 /proc/loadavg))"
