#!/usr/bin/env bash
# One command from a clean clone: install dependencies, build with -Werror, run every test; then
# the hardening step: the unit suites of the file readers and the sampler under ASan+UBSan and
# TSan (scripts/sanitize.sh ci) and every libFuzzer target for 30 s (scripts/fuzz.sh all 30).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh ci
ctest --preset ci --parallel "$(nproc 2>/dev/null || echo 2)"
scripts/sanitize.sh ci
# A fixed seed: the smoke explores the same inputs on every run, so that CI is reproducible.
NNERGY_FUZZ_ARGS="-seed=1" scripts/fuzz.sh all 30
