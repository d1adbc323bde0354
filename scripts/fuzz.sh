#!/usr/bin/env bash
# Runs nnergy's libFuzzer targets (fuzz/README.md), building the `sanitize` preset (build/sanitize) first
# when needed.
#   scripts/fuzz.sh TARGET HOURS    one target for HOURS (fractions allowed: 0.25 = 15 min)
#   scripts/fuzz.sh all SECONDS     every target for SECONDS each (the CI smoke: about 30)
#   scripts/fuzz.sh --list          the targets
# Each run fuzzes a work copy of fuzz/corpus/TARGET (build/sanitize/work/TARGET/corpus, kept between
# runs; set NNERGY_FUZZ_WORK to move it), so the committed corpus grows only by what you copy
# back. Prints per target: runs, exec/s, coverage, new units, findings. Exit 1 on a finding (a
# crash, sanitizer report, uncaught non-InvalidInput exception, leak, timeout or out-of-memory)
# with the saved input's path; 2 on a usage error.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"
build="$root/build/sanitize"
work="${NNERGY_FUZZ_WORK:-$build/work}"
targets=(onnx_import account_trace power_trace model_file device_catalog published_measurements
         dataset llm_config)
# The JSON readers: their inputs may be up to 1 MiB (-max_len), so that documents nested 100,000
# deep (the 200 KB regress-*-100000-* seeds) and longer ones are tried. libFuzzer's default
# -max_len follows the largest seed.
json_targets=(account_trace power_trace model_file device_catalog published_measurements llm_config)
json_max_len=1048576

usage() {
  sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
}

if [[ $# -eq 1 && "$1" == "--list" ]]; then
  printf '%s\n' "${targets[@]}"
  exit 0
fi
[[ $# -eq 2 ]] || usage
which="$1"
amount="$2"
[[ "$amount" =~ ^[0-9]+([.][0-9]+)?$ ]] || { echo "fuzz.sh: '$amount' is not a number" >&2; exit 2; }
if [[ "$which" == "all" ]]; then
  run_targets=("${targets[@]}")
  seconds="$(awk -v s="$amount" 'BEGIN { printf "%d", s }')"
else
  found=0
  for t in "${targets[@]}"; do [[ "$t" == "$which" ]] && found=1; done
  if [[ $found -eq 0 ]]; then
    echo "fuzz.sh: unknown target '$which' (scripts/fuzz.sh --list)" >&2
    exit 2
  fi
  run_targets=("$which")
  seconds="$(awk -v h="$amount" 'BEGIN { printf "%d", h * 3600 }')"
fi
[[ "$seconds" -ge 1 ]] || { echo "fuzz.sh: the run time must be at least 1 s" >&2; exit 2; }

# Build (configure only when build/fuzz has never been configured).
jobs="$(nproc 2>/dev/null || echo 2)"
if [[ ! -f "$build/CMakeCache.txt" ]]; then
  nice -n 15 cmake --preset sanitize >/dev/null
fi
build_targets=()
for t in "${run_targets[@]}"; do build_targets+=("fuzz_$t"); done
nice -n 15 cmake --build "$build" --parallel "$jobs" --target "${build_targets[@]}" >/dev/null

supp="$root/fuzz/sanitizer-suppressions"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1:suppressions=$supp/ubsan.supp}"
export LSAN_OPTIONS="${LSAN_OPTIONS:-suppressions=$supp/lsan.supp}"

status=0
printf '%-24s %8s %10s %8s %8s %8s %7s  %s\n' target seconds runs exec/s cov new_cov units finding
for t in "${run_targets[@]}"; do
  dir="$work/$t"
  mkdir -p "$dir/corpus" "$dir/artifacts"
  # Seeds: the committed corpus, added to what earlier runs found.
  cp -n "$root/fuzz/corpus/$t/"* "$dir/corpus/" 2>/dev/null || true
  touch "$dir/.run_started"
  args=(-max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 -print_final_stats=1
        -artifact_prefix="$dir/artifacts/")
  [[ -f "$root/fuzz/dict/$t.dict" ]] && args+=(-dict="$root/fuzz/dict/$t.dict")
  for j in "${json_targets[@]}"; do [[ "$j" == "$t" ]] && args+=(-max_len="$json_max_len"); done
  log="$dir/last_run.log"
  rc=0
  # shellcheck disable=SC2086 # NNERGY_FUZZ_ARGS: extra libFuzzer flags, split on spaces
  nice -n 15 "$build/fuzz/fuzz_$t" "${args[@]}" ${NNERGY_FUZZ_ARGS:-} "$dir/corpus" >"$log" 2>&1 ||
    rc=$?
  runs="$(LC_ALL=C sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)"
  eps="$(LC_ALL=C sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)"
  units="$(LC_ALL=C sed -n 's/^stat::new_units_added: *//p' "$log" | tail -1)"
  cov_start="$(grep -a -m1 -E 'INITED cov: [0-9]+' "$log" | sed -E 's/.*INITED cov: ([0-9]+).*/\1/' || true)"
  cov_end="$(grep -a -E '^#[0-9]+.*cov: [0-9]+' "$log" | tail -1 | sed -E 's/.*cov: ([0-9]+).*/\1/' || true)"
  new_cov="-"
  if [[ -n "$cov_start" && -n "$cov_end" ]]; then new_cov=$((cov_end - cov_start)); fi
  finding="none"
  # Findings: libFuzzer's non-zero exit, or new crash-/leak-/timeout-/oom- files (slow-unit-
  # files are only slow, not findings).
  new_files="$(find "$dir/artifacts" -type f \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' \
                 -o -name 'oom-*' \) -newer "$dir/.run_started" 2>/dev/null | head -1)"
  saved="$(grep -a -E 'Test unit written to ' "$log" | tail -1 | sed 's/.*Test unit written to //' || true)"
  if [[ $rc -ne 0 || -n "$new_files" ]]; then
    status=1
    kind="$(grep -a -m1 -E '^==[0-9]+==ERROR|^SUMMARY|FINDING|runtime error|ERROR: libFuzzer' "$log" | head -c 160 || true)"
    saved="${saved:-$new_files}"
    finding="${saved:-exit code $rc, see $log}"
    [[ -n "$kind" ]] && finding="$finding ($kind)"
  fi
  printf '%-24s %8s %10s %8s %8s %8s %7s  %s\n' "$t" "$seconds" "${runs:--}" "${eps:--}" \
    "${cov_end:--}" "$new_cov" "${units:--}" "$finding"
done
if [[ $status -ne 0 ]]; then
  echo "fuzz.sh: finding(s) above; reproduce with build/sanitize/fuzz/fuzz_TARGET FILE (log: $work/TARGET/last_run.log)" >&2
fi
exit $status
