#!/usr/bin/env bash
# Installs the Debian 12 packages nnergy builds against. Idempotent and non-interactive:
# packages already present are not touched, and apt runs only when something is missing.
#   scripts/install-deps.sh            build + test dependencies (LibTorch, CPU, for profile/; Debian's
#                                      Python torch, for the live test of python/nnergy_torch;
#                                      pybind11, pandas and pytest for the Python package nnergy)
#   scripts/install-deps.sh --tools    also what tools/ needs (torchvision, onnx, sklearn, rsvg-convert;
#                                      torchvision also for tools/python_package_timing.py)
set -euo pipefail

packages=(
  build-essential cmake git pkg-config
  libeigen3-dev nlohmann-json3-dev libcli11-dev libfmt-dev libsqlite3-dev
  libprotobuf-dev protobuf-compiler libonnx-dev
  libxgboost-dev xgboost libsimdjson-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libtorch-dev libopenblas0-openmp python3-torch
  pybind11-dev python3-pytest python3-pandas
)
if [[ "${1:-}" == "--tools" ]]; then
  packages+=(python3-torchvision python3-onnx python3-sklearn librsvg2-bin)
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [[ ${#missing[@]} -eq 0 ]]; then
  echo "install-deps: all ${#packages[@]} packages already installed"
  exit 0
fi

as_root=()
if [[ $(id -u) -ne 0 ]]; then
  command -v sudo >/dev/null || { echo "install-deps: need root (or sudo) to install: ${missing[*]}" >&2; exit 1; }
  as_root=(sudo)
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${as_root[@]}" apt-get update -qq
"${as_root[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
