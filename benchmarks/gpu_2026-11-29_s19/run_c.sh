#!/bin/bash
# Nineteenth session, run c (H200): two more orders of lpt's shares ("mix": longest and shortest alternating; "short":
# shortest first) beside lpt, deal and tail on CONFIGS[64], against choose() and cuDNN (D 64 causal T 1024-4096 and
# not causal T 1024-2048), medians of 3 interleaved rounds; then every attention GPU test (choose() now takes
# CONFIGS[64] with lpt for D 64 causal below T 8192).
O=$OUT
{ nvidia-smi --query-gpu=name --format=csv,noheader; echo "head $HEAD"; } > $O/info.txt; cat $O/info.txt
grep -q H200 $O/info.txt || { echo "not an H200"; exit 3; }
export PYTHONPATH=$PWD FLASHCOURSE_MODE=gpu PYTHONUNBUFFERED=1
S=64:1024:1,64:2048:1,64:4096:1,64:1024:0,64:2048:0
timeout 150 python3 benchmarks/attention_gluon_check.py $O/c.json --psmem --sweep BALANCED_SWEEP --shapes $S \
  --budget 130 --per-call 60 > $O/c.log 2>&1; echo "exit $?"
grep "median of rounds" $O/c.log; grep ERROR $O/c.log | head -5
timeout 400 python3 -m pytest -q -ra -p no:cacheprovider tests/test_attention_fast.py tests/test_attention_gluon.py \
  tests/test_attention_hopper.py > $O/pytest.txt 2>&1; echo "pytest rc=$?"; tail -n 12 $O/pytest.txt
