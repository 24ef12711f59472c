#!/bin/bash
# Nineteenth session, run a (H200): the balanced schedule (Config.balanced: the host deals query tiles to the persistent
# CTAs longest first, flash_attention_gluon.schedule) -- its GPU tests and choose()'s (the producers lost an unused
# constexpr), then BALANCED_SWEEP timed against choose()'s config and cuDNN where the persistent configs run (D 64
# causal T 1024-4096, D 128 causal T 1024-2048, D 64 and 128 T 1024 not causal), medians of 3 interleaved rounds.
O=$OUT
{ nvidia-smi --query-gpu=name --format=csv,noheader; echo "head $HEAD"; } > $O/info.txt; cat $O/info.txt
grep -q H200 $O/info.txt || { echo "not an H200"; exit 3; }
export PYTHONPATH=$PWD FLASHCOURSE_MODE=gpu PYTHONUNBUFFERED=1
timeout 220 python3 -m pytest -q -ra -p no:cacheprovider tests/test_attention_fast.py -k "balanced or choose or on_hopper" \
  > $O/pytest.txt 2>&1; echo "pytest rc=$?"; tail -n 12 $O/pytest.txt
S=64:1024:1,64:2048:1,64:4096:1,128:1024:1,128:2048:1,64:1024:0,128:1024:0
timeout 330 python3 benchmarks/attention_gluon_check.py $O/balanced.json --psmem --sweep BALANCED_SWEEP --shapes $S \
  --budget 300 --per-call 60 > $O/balanced.log 2>&1; echo "exit $?"
grep -A12 "best Gluon" $O/balanced.log; grep "median of rounds" $O/balanced.log; grep ERROR $O/balanced.log | head -5
