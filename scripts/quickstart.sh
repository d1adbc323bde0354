#!/usr/bin/env bash
# One command from a clean clone: install dependencies, build, and predict ResNet-50 on an A100.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh --main
# Only the command-line tool (and the LibTorch plugin it loads): no tests, no benchmarks.
scripts/build.sh quickstart nnergy
exec build/release/apps/nnergy/nnergy predict resnet50 --device a100-40gb --mode inference --batch 32
