#!/usr/bin/env bash
# The GPU validation, in one call on a lent GPU machine (see README "Verifying on a GPU").
# Writes logs and JSON under ${OUT:-gpu-out}. Needs torch, triton, cupy and pytest there.
set -u
OUT=${OUT:-gpu-out}; mkdir -p "$OUT"
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1 FLASHCOURSE_MODE=gpu
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv | tee "$OUT/gpu.txt"
python3 -c "import torch, triton, cupy; print('torch', torch.__version__, 'triton', triton.__version__, 'cupy', cupy.__version__)" | tee -a "$OUT/gpu.txt"
step=${1:-all}
if [ "$step" = all ] || [ "$step" = bench ]; then
  python3 -m kernels_ref.bench --sweep --json "$OUT/bench.json" 2>&1 | tee "$OUT/bench.log"
fi
if [ "$step" = all ] || [ "$step" = engine ]; then
  # correctness checks in parallel; bandwidth checks one at a time so they time a quiet GPU
  python3 -m pytest -q -p no:cacheprovider tests/test_gpu_engine.py -k "not bandwidth" -n 8 -rA 2>&1 | tee "$OUT/engine.log" | grep -E "PASS|FAIL|passed|failed|rror" | tail -80
  python3 -m pytest -q -p no:cacheprovider tests/test_gpu_engine.py -k "bandwidth" -rA -s 2>&1 | tee "$OUT/engine_bw.log" | grep -E "PASS|FAIL|passed|failed|rror" | tail -60
fi
