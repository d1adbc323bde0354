#!/usr/bin/env bash
# One command from a clean clone: install dependencies, build with -Werror, run every test; then
# the hardening step: the unit suites of the file readers and the sampler under ASan+UBSan and
# TSan (scripts/sanitize.sh ci), every libFuzzer target on its committed corpus, and 30 s of
# fuzzing each (scripts/fuzz.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh ci
ctest --preset ci --parallel "$(nproc 2>/dev/null || echo 2)"
scripts/sanitize.sh ci
# Fuzzing, in two parts. First every committed input of every target (fuzz/corpus: the seeds and
# each regression found so far) runs once: deterministic, and any crash fails the run. Then each
# target mutates for 30 s (a fixed seed): its findings are printed with the saved input but do not
# fail the run, because 30 s of mutation reach new inputs at random, and a random red would block
# unrelated work; `scripts/fuzz.sh TARGET HOURS` is the campaign that fails on them.
NNERGY_FUZZ_ARGS="-runs=0" scripts/fuzz.sh all 30
NNERGY_FUZZ_ARGS="-seed=1" scripts/fuzz.sh all 30 ||
  echo "test.sh: the 30 s fuzzing smoke found something (above): reproduce and fix it (fuzz/README.md)"
