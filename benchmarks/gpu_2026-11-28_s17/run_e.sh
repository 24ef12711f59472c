#!/bin/bash
# Seventeenth session, run e (H200): D 64 causal, where choose() is still behind cuDNN (T 1024-4096, 0.92-0.96x in
# run d): 64-key tiles (half the diagonal tile's waste) persistent, two or three consumer warpgroups, P in registers
# or shared memory (SHORT_SWEEP's causal entries), against choose()'s config and cuDNN; medians of 3 rounds.
O=$OUT
{ nvidia-smi --query-gpu=name --format=csv,noheader; echo "head $HEAD"; } > $O/info.txt; cat $O/info.txt
grep -q H200 $O/info.txt || { echo "not an H200"; exit 3; }
export PYTHONPATH=$PWD FLASHCOURSE_MODE=gpu PYTHONUNBUFFERED=1
S=64:1024:1,64:2048:1,64:4096:1,64:8192:1
timeout 300 python3 benchmarks/attention_gluon_check.py $O/causal.json --psmem --sweep SHORT_SWEEP --shapes $S \
  --configs BM128-BN64-s4-c2-p,BM192-BN64 --budget 270 --per-call 60 > $O/causal.log 2>&1; echo "exit $?"
grep -A5 "best Gluon" $O/causal.log; grep "median of rounds" $O/causal.log; grep ERROR $O/causal.log | head -5
