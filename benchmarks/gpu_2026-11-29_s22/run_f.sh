#!/bin/bash
# Twenty-second session, run f (H200): offset_probe.py (softmax 8192 x 8192 float32: the output's place against the
# bandwidth) in two processes (f1, f2).
O=$OUT
{ nvidia-smi --query-gpu=name --format=csv,noheader; echo "head $HEAD"; } > $O/info.txt; cat $O/info.txt
grep -q H200 $O/info.txt || { echo "not an H200"; exit 3; }
pip install -q --no-index --no-deps --target /tmp/liger .whl/liger_kernel-*.whl 2>/dev/null
export PYTHONPATH=$PWD:/tmp/liger FLASHCOURSE_MODE=gpu PYTHONUNBUFFERED=1
for n in 1 2; do
  SECONDS=0
  timeout 200 python3 benchmarks/gpu_2026-11-29_s22/offset_probe.py $O/f$n.json > $O/f$n.log 2>&1
  echo "exit $? in ${SECONDS}s"; cat $O/f$n.log | tail -n 26
done
