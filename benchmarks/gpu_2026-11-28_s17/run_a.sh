#!/bin/bash
# Seventeenth session, run a (H200): flash_attention_gluon.SHORT_SWEEP (D 64: 256-key tiles with P through shared
# memory, 128 query rows a warpgroup; D 128: P through shared memory in persistent configs) against choose()'s config
# and cuDNN where the H200 report (s16/c) has us behind cuDNN: D 64 T 1024-4096, D 128 T 1024 (causal and not).
# Each config checked against fp32 on small inputs (persistent ones also on 3 SMs) and against SDPA on the timed
# shape; medians of 3 interleaved rounds. Then the new GPU test of the P-buffer configs (two buffers, persistent,
# ping-pong, fp16, very negative scores).
O=$OUT
{ nvidia-smi --query-gpu=name --format=csv,noheader; echo "head $HEAD"; } > $O/info.txt; cat $O/info.txt
grep -q H200 $O/info.txt || { echo "not an H200"; exit 3; }
export PYTHONPATH=$PWD FLASHCOURSE_MODE=gpu PYTHONUNBUFFERED=1
S=64:1024:0,64:1024:1,64:2048:0,64:2048:1,64:4096:0,64:4096:1,128:1024:0,128:1024:1
timeout 330 python3 benchmarks/attention_gluon_check.py $O/short.json --psmem --sweep SHORT_SWEEP --shapes $S \
  --budget 300 --per-call 60 > $O/short.log 2>&1; echo "exit $?"
grep -A12 "best Gluon" $O/short.log; grep "median of rounds" $O/short.log; grep -c ERROR $O/short.log
timeout 200 python3 -m pytest -q -ra -p no:cacheprovider tests/test_attention_fast.py -k "p_through or p_buffer" \
  > $O/pytest.txt 2>&1; echo "pytest rc=$?"; tail -n 6 $O/pytest.txt
