#!/bin/bash
# Sixteenth session, run b (H200): after run a (the third consumer warpgroup with P in one shared buffer won D 128
# not causal T 2048 and D 64 T 16384), the same configs on the longer sequences and causal D 128 (1), then the
# ping-pong variants with three consumers (2: the turn barriers' first run with three warpgroups, after the rest, so
# that a hang costs only them). Medians of 3 interleaved rounds, each config checked first (attention_gluon_check.py).
O=$OUT
{ nvidia-smi --query-gpu=name --format=csv,noheader; echo "head $HEAD"; } > $O/info.txt; cat $O/info.txt
grep -q H200 $O/info.txt || { echo "not an H200"; exit 3; }
export PYTHONPATH=$PWD FLASHCOURSE_MODE=gpu
S=128:2048:0,128:4096:0,128:8192:0,128:16384:0,128:2048:1,128:4096:1,128:8192:1,128:16384:1,64:4096:0,64:8192:0,64:8192:1,64:16384:0,64:16384:1
python3 benchmarks/attention_gluon_check.py $O/b1.json --psmem --shapes $S --configs -s2-c3-ps1,-s2-c3-ps2 \
  --budget 300 --per-call 60 > $O/b1.log 2>&1; echo "exit $?"
grep -A30 "best Gluon" $O/b1.log
S=128:1024:0,128:2048:0,128:4096:0,128:8192:0,64:4096:0,64:16384:0,64:16384:1
python3 benchmarks/attention_gluon_check.py $O/b2.json --psmem --shapes $S --configs -pp-ps \
  --budget 150 --per-call 30 > $O/b2.log 2>&1; echo "exit $?"
grep "median of\|ERROR\|hung" $O/b2.log | sed 's/gluon-//g'
