#!/bin/bash
# Twentieth session, run d (H200): where the report (run c) left choose() behind cuDNN (D 128 T 1024 and D 64 T 2048,
# both without the mask): SEAM_SWEEP against choose() and cuDNN, D 64 T 1024-4096 and D 128 T 1024-2048 without the
# mask, in two processes (d1, d2), medians of 3 interleaved rounds each.
O=$OUT
{ nvidia-smi --query-gpu=name --format=csv,noheader; echo "head $HEAD"; } > $O/info.txt; cat $O/info.txt
grep -q H200 $O/info.txt || { echo "not an H200"; exit 3; }
export PYTHONPATH=$PWD FLASHCOURSE_MODE=gpu PYTHONUNBUFFERED=1
S=128:1024:0,128:2048:0,64:1024:0,64:2048:0,64:4096:0
for n in 1 2; do
  timeout 200 python3 benchmarks/attention_gluon_check.py $O/d$n.json --psmem --sweep SEAM_SWEEP --shapes $S \
    --budget 180 --per-call 60 > $O/d$n.log 2>&1; echo "exit $?"
  grep "median of rounds" $O/d$n.log; grep ERROR $O/d$n.log | head -5
done
