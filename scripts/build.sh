#!/usr/bin/env bash
# Configures and builds nnergy with a CMake preset (default: release) into build/<preset>:
# everything, or only the named targets.
#   scripts/build.sh [preset [target ...]]
set -euo pipefail
cd "$(dirname "$0")/.."
preset="${1:-release}"
shift || true
jobs="$(nproc 2>/dev/null || echo 2)"
cmake --preset "$preset" >/dev/null
if [[ $# -gt 0 ]]; then
  cmake --build --preset "$preset" --parallel "$jobs" --target "$@"
else
  cmake --build --preset "$preset" --parallel "$jobs"
fi
