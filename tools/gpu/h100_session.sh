#!/usr/bin/env bash
# One call on a machine with a CUDA GPU (run from the repository root), results under $1:
# measurement checks, the whole-network campaign (until its deadline), a recorded training step.
# The nnergy CLI comes prebuilt in .gpu/ (binary and the Debian libraries it links).
set -uo pipefail
out=$1
deadline=${2:-420}
mkdir -p "$out" /tmp/work
export PYTHONUNBUFFERED=1
mkdir -p .gpu/bin
printf '#!/bin/sh\nLD_LIBRARY_PATH=%s/.gpu/lib exec %s/.gpu/nnergy "$@"\n' "$PWD" "$PWD" > .gpu/bin/nnergy
chmod +x .gpu/bin/nnergy
export NNERGY_BIN=$PWD/.gpu/bin/nnergy
$NNERGY_BIN --version || echo "nnergy does not run here"
nvidia-smi --query-gpu=name,driver_version,pstate,power.limit,clocks.sm,temperature.gpu --format=csv
nvidia-smi --query-compute-apps=pid,name,used_memory --format=csv
echo "== smoke"
python3 tools/gpu/network_campaign.py --out /tmp/work/smoke.jsonl --context-out /tmp/work/smoke_ctx.json \
  --only resnet18,bert_base --batches 8 --precisions bf16 --window-s 0.2 || exit 1
grep -q error /tmp/work/smoke.jsonl && { cat /tmp/work/smoke.jsonl; exit 1; }
echo "== checks"
tools/gpu/measurement_check.sh "$NNERGY_BIN" /tmp/work/check
echo "== session"
python3 tools/gpu/training_step_session.py /tmp/work/session > /tmp/work/session.log 2>&1
echo "session exit $?"; tail -3 /tmp/work/session.log
tar -C /tmp/work -czf "$out/check.tar.gz" check
tar -C /tmp/work -czf "$out/session.tar.gz" session session.log
echo "== campaign"
python3 tools/gpu/network_campaign.py --out "$out/campaign.jsonl" --context-out "$out/campaign_context.json" \
  --deadline-s "$deadline" --calibration-networks 2>&1 | tee "$out/campaign.log" | tail -25
