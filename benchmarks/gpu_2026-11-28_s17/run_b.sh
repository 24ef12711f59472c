#!/bin/bash
# Seventeenth session, run b (H200): run a's winners where choose() does not take them yet, against choose()'s config
# and cuDNN: D 64 not causal T 1024-16384 with 256-key tiles (persistent, P through shared memory; ping-pong or not),
# D 128 not causal T 1024 and 2048 with the persistent BM128-BN128 tiles and P through shared memory (ping-pong or
# not). Medians of 3 interleaved rounds; each config checked first (fp32 on small inputs, also on 3 SMs; SDPA).
O=$OUT
{ nvidia-smi --query-gpu=name --format=csv,noheader; echo "head $HEAD"; } > $O/info.txt; cat $O/info.txt
grep -q H200 $O/info.txt || { echo "not an H200"; exit 3; }
export PYTHONPATH=$PWD FLASHCOURSE_MODE=gpu PYTHONUNBUFFERED=1
S=64:1024:0,64:2048:0,64:4096:0,64:8192:0,64:16384:0,128:1024:0,128:2048:0
timeout 330 python3 benchmarks/attention_gluon_check.py $O/short.json --psmem --sweep SHORT_SWEEP --shapes $S \
  --configs BN256-s2-c2-p-ps1,BN256-s2-c2-p-pp-ps1,BM128-BN128-s2-c2-p-ps1,BM128-BN128-s2-c2-p-pp-ps1 \
  --budget 300 --per-call 60 > $O/short.log 2>&1; echo "exit $?"
grep -A9 "best Gluon" $O/short.log; grep "median of rounds" $O/short.log; grep -c ERROR $O/short.log
