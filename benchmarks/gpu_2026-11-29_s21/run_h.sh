#!/bin/bash
# Twenty-first session, run h (H200): D 64 T 1024 without the mask, the one shape behind cuDNN in both reports (c, g:
# 0.998, 0.995): SEAM_SWEEP's D 64 entries (SEAM_64 with 2 and with 4 stages, WIDE_64), timed at T 2048 only in the
# twentieth session, against choose()'s SEAM_64 and cuDNN, in two processes (h1, h2), medians of 3 interleaved rounds.
O=$OUT
{ nvidia-smi --query-gpu=name --format=csv,noheader; echo "head $HEAD"; } > $O/info.txt; cat $O/info.txt
grep -q H200 $O/info.txt || { echo "not an H200"; exit 3; }
export PYTHONPATH=$PWD FLASHCOURSE_MODE=gpu PYTHONUNBUFFERED=1
for n in 1 2; do
  timeout 80 python3 benchmarks/attention_gluon_check.py $O/h$n.json --psmem --sweep SEAM_SWEEP --shapes 64:1024:0 \
    --budget 70 --per-call 40 > $O/h$n.log 2>&1; echo "exit $?"
  grep "median of rounds" $O/h$n.log; grep ERROR $O/h$n.log | head -5
done
