#!/usr/bin/env bash
# Installs the Debian 12 packages nnergy builds against. Idempotent and non-interactive:
# packages already present are not touched, and apt runs only when something is missing.
#   scripts/install-deps.sh --main     what nnergy itself builds and runs with (scripts/quickstart.sh):
#                                      the libraries, LibTorch (CPU) for profile/, pybind11, pandas,
#                                      venv and pip for the Python package (`pip install .` in a
#                                      virtual environment, python/README.md); prometheus-cpp for the
#                                      exporter and libslurm-dev (spank.h) for the SPANK plugin
#   scripts/install-deps.sh            also what the tests need (GoogleTest, Google Benchmark, pytest;
#                                      Debian's Python torch for the live tests of nnergy_torch and of
#                                      nn.Module predictions; headless Chromium, which opens every
#                                      kind of HTML report; clang 14 with its sanitizer and libFuzzer
#                                      runtimes and Ninja for the sanitizer and fuzzing step;
#                                      /usr/bin/time for bench/account_scale.sh; Slurm (slurmctld,
#                                      slurmd, slurm-client, munge) and Prometheus with its
#                                      Pushgateway, which the fleet tests start and stop)
#   scripts/install-deps.sh --tools    also what tools/ needs (torchvision, onnx, sklearn, rsvg-convert;
#                                      torchvision also for tools/python_package_timing.py)
set -euo pipefail

packages=(
  build-essential cmake git pkg-config
  libeigen3-dev nlohmann-json3-dev libcli11-dev libfmt-dev libsqlite3-dev
  libprotobuf-dev protobuf-compiler libonnx-dev zlib1g-dev
  libxgboost-dev xgboost libsimdjson-dev
  libtorch-dev libopenblas0-openmp
  pybind11-dev python3-dev python3-pandas python3-venv python3-pip
  prometheus-cpp-dev libslurm-dev
)
# Real services the fleet tests start and stop (tests/fleet/): single-node Slurm and Prometheus.
fleet_test_packages=(slurmctld slurmd slurm-client munge prometheus prometheus-pushgateway)
case "${1:-}" in
  --main) ;;
  "") packages+=(libgtest-dev libgmock-dev libbenchmark-dev python3-torch python3-pytest chromium
                 clang-14 libclang-rt-14-dev ninja-build time ccache "${fleet_test_packages[@]}") ;;
  --tools)
    packages+=(libgtest-dev libgmock-dev libbenchmark-dev python3-torch python3-pytest chromium
               clang-14 libclang-rt-14-dev ninja-build time ccache "${fleet_test_packages[@]}")
    packages+=(python3-torchvision python3-onnx python3-sklearn librsvg2-bin)
    ;;
  *) echo "install-deps: unknown option '$1'; expected --main, --tools or nothing" >&2; exit 2 ;;
esac

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
