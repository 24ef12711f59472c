#!/bin/bash
# Sixteenth session, run d (H200; Config.carry and --carry are in commit 0e7d112, removed after this run):
# Config.carry (persistent CTAs: a work item's last P V and its output overlap the next item's first scores and softmax) against choose()'s persistent configs and cuDNN where we are behind: D 64 T
# 1024-4096 and D 128 T 1024 (not causal) and 1024-2048 (causal). attention_gluon_check.py --carry: each config
# checked against fp32 on small inputs (also on 3 SMs: many items a CTA) and against SDPA first; 5 interleaved rounds.
O=$OUT
{ nvidia-smi --query-gpu=name --format=csv,noheader; echo "head $HEAD"; } > $O/info.txt; cat $O/info.txt
grep -q H200 $O/info.txt || { echo "not an H200"; exit 3; }
export PYTHONPATH=$PWD FLASHCOURSE_MODE=gpu
S=64:1024:0,64:1024:1,64:2048:0,64:2048:1,64:4096:0,64:4096:1,128:1024:0,128:1024:1,128:2048:1
python3 benchmarks/attention_gluon_check.py $O/carry.json --carry --shapes $S --rounds 5 --budget 200 --per-call 30 \
  > $O/carry.log 2>&1; echo "exit $?"
grep "median of\|ERROR\|hung\|wrong" $O/carry.log | sed 's/gluon-//g'
