#!/bin/bash
# Twenty-fourth session, run e (H200): Chapter 5's RMSNorm reference with its register cap: registers per thread as
# compiled here (e0, report's ptxas; e0b, Triton's), the report's rmsnorm cases in two processes (e1, e2), and
# `flashcourse validate ch05_fused_norms` on the GPU (e3).
O=$OUT
{ nvidia-smi --query-gpu=name --format=csv,noheader; echo "head $HEAD"; } > $O/info.txt; cat $O/info.txt
grep -q H200 $O/info.txt || { echo "not an H200"; exit 3; }
pip install -q --no-index --no-deps --target /tmp/liger .whl/liger_kernel-*.whl 2>/dev/null
export PYTHONPATH=$PWD FLASHCOURSE_MODE=gpu PYTHONUNBUFFERED=1
SECONDS=0
python3 benchmarks/gpu_2026-11-29_s24/regs_probe.py $O/e0.json --pin 2>&1 | tail -4
python3 benchmarks/gpu_2026-11-29_s24/regs_probe.py /tmp/e0b.json 2>&1 | tail -3; cp /tmp/e0b.json $O/e0b.json
for k in 1 2; do
  PYTHONPATH=$PWD:/tmp/liger timeout 150 python3 -m kernels_ref.report --only rmsnorm,add_rmsnorm --json $O/e$k.json \
    --no-render > /tmp/e$k.log 2>&1; echo "e$k exit $? at ${SECONDS}s"; grep -E "rmsnorm|copy" /tmp/e$k.log | tail -12
done
cp /tmp/e1.log $O/e1.log
OUT=/tmp/gpu timeout $((560 - SECONDS)) bash tests/gpu_run.sh validate:ch05_fused_norms > /tmp/e3.log 2>&1
echo "e3 exit $? at ${SECONDS}s"; cp /tmp/gpu/validate.log $O/e3_validate.log; tail -8 /tmp/e3.log
