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
  # quiet checks 8 at a time, bandwidth checks one at a time on a quiet GPU (no pytest-xdist needed)
  python3 tests/test_gpu_engine.py 2>&1 | tee "$OUT/engine.log" | grep -E "^BAD|bandwidth|as expected"
fi
