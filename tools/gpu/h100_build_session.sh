#!/usr/bin/env bash
# One call on a machine with a CUDA GPU (run from the repository root), results under $1:
# builds nnergy there (tools/gpu/build_on_device.sh), runs the archline sweep (FP32, FP64) while
# the LibTorch build goes on, then the operation campaign until the time budget $2 (s) is spent.
set -uo pipefail
out=$1
budget=${2:-560}
start=$SECONDS
JOBS=14 tools/gpu/build_on_device.sh .gpu/debs cuda || exit 1
JOBS=12 tools/gpu/build_on_device.sh .gpu/debs torch > "$out/torch_build.txt" 2>&1 &
tb=$!
export LD_LIBRARY_PATH=/tmp/deps/usr/lib/x86_64-linux-gnu
echo "== archline at $((SECONDS - start)) s"
timeout 230 /tmp/nnergy-cuda/apps/nnergy/nnergy archline run --gpu cuda:0 --precision fp32,fp64 \
  --batch-time-s 1 --device h100-sxm --out "$out/archline_h100_sxm.csv" > "$out/archline.log" 2>&1
echo "archline exit $?"; tail -4 "$out/archline.log"
wait $tb; cat "$out/torch_build.txt"
t=/tmp/nnergy-torch/apps/nnergy/nnergy
[[ -x $t ]] || exit 0
for dtype in bf16 tf32; do
  left=$((budget - (SECONDS - start)))
  (( left > 20 )) || break
  echo "== profile $dtype at $((SECONDS - start)) s, $left s left"
  extra=(--dtype bf16); limit=$((left * 6 / 10))
  [[ $dtype == tf32 ]] && { extra=(--dtype fp32 --tf32); limit=$left; }
  timeout $limit "$t" profile \
    --networks resnet50,mobilenet_v2,vgg16,bert_base,resnet18,densenet121,efficientnet_b0,vit_b_16 \
    --modes inference,training --gpu cuda:0 "${extra[@]}" --batch 32 --min-time-s 0.25 --repeats 1 \
    --db "$out/ops_h100_sxm.sqlite" 2>&1 | tail -5
done
