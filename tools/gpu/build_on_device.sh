#!/usr/bin/env bash
# Builds nnergy on a CUDA machine without Debian's package archive (run from the repository
# root): the Debian 12 packages nnergy builds against travel as .deb files in DEBS_DIR and are
# unpacked into /tmp/deps; LibTorch is the CUDA one of the machine's Python torch.
#   tools/gpu/build_on_device.sh DEBS_DIR cuda   the CLI with the archline CUDA kernels, no
#                                                LibTorch, in /tmp/nnergy-cuda (quick)
#   tools/gpu/build_on_device.sh DEBS_DIR torch  the CLI and its LibTorch plugin (nnergy profile),
#                                                in /tmp/nnergy-torch
# The binaries need LD_LIBRARY_PATH=/tmp/deps/usr/lib/x86_64-linux-gnu to run. Prints
# "built: DIR" or the first errors of the build log.
set -uo pipefail
debs=$1
tree=$2
if [[ ! -d /tmp/deps/usr ]]; then
  mkdir -p /tmp/deps
  for f in "$debs"/*.deb; do dpkg -x "$f" /tmp/deps; done
fi
export LD_LIBRARY_PATH=/tmp/deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PATH=/tmp/deps/usr/bin:$PATH
export CMAKE_POLICY_VERSION_MINIMUM=3.5
nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
link=-Wl,-rpath-link,/tmp/deps/usr/lib/x86_64-linux-gnu
args=(-G Ninja -DCMAKE_BUILD_TYPE=Release -DNNERGY_BUILD_TESTS=OFF -DNNERGY_BUILD_BENCH=OFF
      -DCMAKE_DISABLE_FIND_PACKAGE_pybind11=ON -DCMAKE_CUDA_COMPILER="$nvcc"
      -DNNERGY_CUDA_ARCHITECTURES=90 -DNNERGY_WITH_CUDA=ON
      -DCMAKE_EXE_LINKER_FLAGS=$link -DCMAKE_SHARED_LINKER_FLAGS=$link -DCMAKE_MODULE_LINKER_FLAGS=$link)
case $tree in
  cuda) args+=(-DCMAKE_PREFIX_PATH=/tmp/deps/usr -DNNERGY_WITH_TORCH=OFF) ;;
  torch)
    torch_prefix=$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)')
    args+=("-DCMAKE_PREFIX_PATH=/tmp/deps/usr;$torch_prefix" -DNNERGY_WITH_TORCH=ON) ;;
  *) echo "build_on_device: expected cuda or torch, found '$tree'" >&2; exit 2 ;;
esac
dir=/tmp/nnergy-$tree
log=/tmp/nnergy-$tree.log
if cmake -S . -B "$dir" "${args[@]}" > "$log" 2>&1 && ninja -C "$dir" -j "${JOBS:-12}" nnergy >> "$log" 2>&1; then
  echo "built: $dir"
else
  echo "build of $dir failed:"
  grep -m8 -A6 -E "error|Error" "$log"
  exit 1
fi
