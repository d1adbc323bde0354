#!/usr/bin/env bash
# Measurement checks on a CUDA GPU (run from the repository root): `nnergy monitor --source nvml`
# next to `nvidia-smi -lms 100` over tools/gpu/power_load.py's 30 s of phases, and the SASS of the
# archline kernels. Usage: tools/gpu/measurement_check.sh NNERGY_BIN OUT_DIR
# Writes into OUT_DIR: nvidia-smi-q.txt, smi.csv (nvidia-smi every 100 ms), nnergy_nvml.csv (the
# monitor's raw trace), monitor.json (its summary), load.log (phase times), kernels.sass and
# kernels_resources.txt. Reads only; changes no GPU setting.
set -uo pipefail
nnergy=$1
out=$2
mkdir -p "$out"
nvidia-smi -q > "$out/nvidia-smi-q.txt" 2>&1
nvidia-smi -q -d SUPPORTED_CLOCKS > "$out/nvidia-smi-supported-clocks.txt" 2>&1
fields=timestamp,power.draw,power.draw.average,power.draw.instant,clocks.sm,clocks.mem,temperature.gpu,utilization.gpu,clocks_event_reasons.active
nvidia-smi --query-gpu=$fields --format=csv,noheader > /dev/null 2>&1 ||
  fields=timestamp,power.draw,clocks.sm,clocks.mem,temperature.gpu,utilization.gpu
nvidia-smi --query-gpu=$fields --format=csv -lms 100 > "$out/smi.csv" 2>&1 &
smi=$!
sleep 1
"$nnergy" monitor --source nvml --interval-ms 20 -o "$out/nnergy_nvml.csv" --json \
  -- python3 tools/gpu/power_load.py > "$out/load.log" 2> "$out/monitor.json"
echo "monitor exit $?"
sleep 1
kill $smi
# SASS of the archline kernels: instructions per element of each kernel family.
nvcc -std=c++17 -arch=sm_90 -cubin -I src -Xptxas -v -o /tmp/archline.cubin \
  src/nnergy/archline/kernels/benchmark_runner.cu > "$out/kernels_resources.txt" 2>&1
cuobjdump -sass /tmp/archline.cubin > "$out/kernels.sass" 2>&1
echo "sass lines $(wc -l < "$out/kernels.sass")"
