#!/bin/bash
# Twenty-first session, run a (H200): D 64 without the mask, where choose()'s SEAM_64 read 0.98 of cuDNN at T 2048
# (gpu_2026-11-29_s20/e): SEAM_MORE_SWEEP against choose() and cuDNN, T 1024-4096, in two processes (a1, a2), medians
# of 3 interleaved rounds each.
O=$OUT
{ nvidia-smi --query-gpu=name --format=csv,noheader; echo "head $HEAD"; } > $O/info.txt; cat $O/info.txt
grep -q H200 $O/info.txt || { echo "not an H200"; exit 3; }
export PYTHONPATH=$PWD FLASHCOURSE_MODE=gpu PYTHONUNBUFFERED=1
S=64:1024:0,64:2048:0,64:4096:0
for n in 1 2; do
  timeout 250 python3 benchmarks/attention_gluon_check.py $O/a$n.json --psmem --sweep SEAM_MORE_SWEEP --shapes $S \
    --budget 230 --per-call 60 > $O/a$n.log 2>&1; echo "exit $?"
  grep "median of rounds" $O/a$n.log; grep ERROR $O/a$n.log | head -5
done
