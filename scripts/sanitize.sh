#!/usr/bin/env bash
# Builds the `sanitize` (ASan+UBSan) and `tsan` (ThreadSanitizer) presets and runs the chosen
# GoogleTest binaries under them, for CI; about 15 min from clean build directories on 2 cores.
#   scripts/sanitize.sh [asan|tsan|all|ci]  (default: all)
# `ci` is the part scripts/test.sh runs within the CI budget: the ASan+UBSan suites of the modules
# that read user files and of the sampler (core, device, graph, dataset, measure, account) and the
# TSan suite of the sampler and meter (measure_test); `all` adds the analytical, predict, network,
# features, regress, learn and calibration suites under ASan+UBSan and account_test under TSan.
# Each binary runs once, directly (not one process per test through ctest, which would pay the
# sanitizer start-up ~1000 times); a sanitizer report fails the binary (halt_on_error). Exit 1
# when a binary fails. `ctest --preset sanitize` / `ctest --preset tsan` run everything built
# there, with the same options, one process per test.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"
which="${1:-all}"
case "$which" in asan | tsan | all | ci) ;; *)
  echo "usage: scripts/sanitize.sh [asan|tsan|all|ci]" >&2
  exit 2
  ;;
esac
jobs="$(nproc 2>/dev/null || echo 2)"
supp="$root/fuzz/sanitizer-suppressions"

# ASan+UBSan: the unit suites of the modules that read user files (the fuzzed readers: graph,
# device, dataset, learn, calibration, measure, account) and of the stages between them. Left out to stay
# within ~15 min on 2 cores (they pass under this preset; run them with
# `cmake --build build/sanitize && ctest --preset sanitize`):
#   archline_test, report_test, api_test: ~4 min more of instrumented build (archline, report
#     with its inlined chart libraries, api);
#   the CLI suites (cli_test, learn_cli_test, ...): the whole instrumented `nnergy` executable,
#     and learn_cli_test alone runs ~5 min; cli_test's profile tests need LibTorch, which the
#     preset leaves out.
asan_tests=(core_test device_test graph_test analytical_test predict_test network_test dataset_test
            features_test regress_test learn_test calibration_test measure_test account_test)
# TSan: the threaded parts: the power sampler and measurement window (measure_test) and the
# accounting runs on sampled traces (account_test).
tsan_tests=(measure_test account_test)
# The CI subset (see the top).
asan_ci_tests=(core_test device_test graph_test dataset_test measure_test account_test)
tsan_ci_tests=(measure_test)

# Tests left out of a binary, as gtest negative filters, with why (see fuzz/README.md).
declare -A asan_skip=(
  # Poly-lasso's conformance cases: at -O0 under ASan its (Eigen) fit takes ~4 min in the first of
  # them, 8 min in all, against ~30 s for the rest of regress_test; its own unit tests still run.
  [regress_test]="Registry/RegressorConformance.*/poly_lasso:PolyLassoRegressor.SaveLoadGivesIdenticalPredictions"
)
declare -A tsan_skip=()

export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:detect_stack_use_after_return=1:check_initialization_order=1:strict_init_order=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1:suppressions=$supp/ubsan.supp}"
export LSAN_OPTIONS="${LSAN_OPTIONS:-suppressions=$supp/lsan.supp}"
export TSAN_OPTIONS="${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1:suppressions=$supp/tsan.supp}"

status=0
now() { date +%s; }

# run_preset PRESET SKIP_ARRAY_NAME TEST...
run_preset() {
  local preset="$1" skip_name="$2"
  shift 2
  local build="$root/build/$preset" start
  local -n skip="$skip_name"
  start="$(now)"
  if [[ ! -f "$build/CMakeCache.txt" ]]; then nice -n 15 cmake --preset "$preset" >/dev/null; fi
  nice -n 15 cmake --build "$build" --parallel "$jobs" --target "$@" >"$build/sanitize-build.log" 2>&1 || {
    tail -40 "$build/sanitize-build.log"
    echo "sanitize.sh: $preset: build failed (log: $build/sanitize-build.log)" >&2
    status=1
    return
  }
  echo "$preset: built ${*} in $(($(now) - start)) s"
  local t binary filter log rc tstart
  for t in "$@"; do
    binary="$(find "$build/tests" -name "$t" -type f -perm -u+x | head -1)"
    if [[ -z "$binary" ]]; then
      echo "sanitize.sh: $preset: no binary $t" >&2
      status=1
      continue
    fi
    filter="${skip[$t]:-}"
    log="$build/$t.sanitize.log"
    tstart="$(now)"
    rc=0
    # Tests find their data through compile-time paths; run from the build tree like ctest.
    (cd "$(dirname "$binary")" &&
      nice -n 15 "$binary" --gtest_brief=1 ${filter:+--gtest_filter="-$filter"}) >"$log" 2>&1 || rc=$?
    if [[ $rc -eq 0 ]]; then
      printf '%s: %-14s ok     %4d s  %s\n' "$preset" "$t" "$(($(now) - tstart))" \
        "$(grep -E '^\[  PASSED  \]' "$log" | head -1)${filter:+ (skipped: $filter)}"
    else
      status=1
      printf '%s: %-14s FAILED %4d s  (exit %d; log %s)\n' "$preset" "$t" "$(($(now) - tstart))" \
        "$rc" "$log"
      grep -E '^\[  FAILED  \]|ERROR: (Address|Leak|Thread)Sanitizer|runtime error|^SUMMARY' "$log" |
        head -20 || true
    fi
  done
}

total_start="$(now)"
[[ "$which" == "asan" || "$which" == "all" ]] && run_preset sanitize asan_skip "${asan_tests[@]}"
[[ "$which" == "tsan" || "$which" == "all" ]] && run_preset tsan tsan_skip "${tsan_tests[@]}"
if [[ "$which" == "ci" ]]; then
  run_preset sanitize asan_skip "${asan_ci_tests[@]}"
  run_preset tsan tsan_skip "${tsan_ci_tests[@]}"
fi
echo "sanitize.sh: $(($(now) - total_start)) s in all; $([[ $status -eq 0 ]] && echo ok || echo FAILED)"
exit $status
