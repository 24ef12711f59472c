#!/bin/bash
# Twenty-second session, run b (H200): pin_probe.py (the softmax kept before the wait for its own warpgroup's P V)
# in two processes (b1, b2), medians of 3 interleaved rounds each.
O=$OUT
{ nvidia-smi --query-gpu=name --format=csv,noheader; echo "head $HEAD"; } > $O/info.txt; cat $O/info.txt
grep -q H200 $O/info.txt || { echo "not an H200"; exit 3; }
export PYTHONPATH=$PWD FLASHCOURSE_MODE=gpu PYTHONUNBUFFERED=1
for n in 1 2; do
  SECONDS=0
  timeout 250 python3 benchmarks/gpu_2026-11-29_s22/pin_probe.py $O/b$n.json > $O/b$n.log 2>&1; echo "exit $? in ${SECONDS}s"
  grep -v "max error" $O/b$n.log | tail -n 12; grep "max error" $O/b$n.log | awk '$NF > 0.03' | head
done
