#!/bin/bash
# Twenty-first session, run b (H200): SEAM_64 with row sums per thread (SEAM_LS_64; run a: level with cuDNN at T 2048,
# ahead of WIDE_64 at T 4096), with 2 stages and with one query buffer, against choose() and cuDNN, D 64 without the mask,
# T 2048-16384, in two processes (b1, b2), medians of 3 interleaved rounds each.
O=$OUT
{ nvidia-smi --query-gpu=name --format=csv,noheader; echo "head $HEAD"; } > $O/info.txt; cat $O/info.txt
grep -q H200 $O/info.txt || { echo "not an H200"; exit 3; }
export PYTHONPATH=$PWD FLASHCOURSE_MODE=gpu PYTHONUNBUFFERED=1
S=64:2048:0,64:4096:0,64:8192:0,64:16384:0
for n in 1 2; do
  timeout 250 python3 benchmarks/attention_gluon_check.py $O/b$n.json --psmem --sweep SEAM_LS_SWEEP --shapes $S \
    --budget 230 --per-call 60 > $O/b$n.log 2>&1; echo "exit $?"
  grep "median of rounds" $O/b$n.log; grep ERROR $O/b$n.log | head -5
done
