#!/usr/bin/env bash
# One command from a clean clone: install dependencies, build with -Werror, run every test.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh ci
ctest --preset ci --parallel "$(nproc 2>/dev/null || echo 2)"
