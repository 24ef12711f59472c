#!/bin/bash
# Nineteenth session, run b (H200): three balanced schedules (flash_attention_gluon.SCHEDULES: "lpt" longest first,
# each CTA's tiles head by head; "deal" the same shares in the order dealt; "tail" the pairs' whole rounds, the last
# round's tiles dealt) on CONFIGS[64] and SHORT_128: GPU tests, then BALANCED_SWEEP against choose() and cuDNN where
# causal (D 64 T 1024-8192, D 128 T 1024-2048), in two processes (b1, b2), medians of 3 interleaved rounds each.
O=$OUT
{ nvidia-smi --query-gpu=name --format=csv,noheader; echo "head $HEAD"; } > $O/info.txt; cat $O/info.txt
grep -q H200 $O/info.txt || { echo "not an H200"; exit 3; }
export PYTHONPATH=$PWD FLASHCOURSE_MODE=gpu PYTHONUNBUFFERED=1
timeout 200 python3 -m pytest -q -ra -p no:cacheprovider tests/test_attention_fast.py -k "balanced or schedule" \
  > $O/pytest.txt 2>&1; echo "pytest rc=$?"; tail -n 12 $O/pytest.txt
S=64:1024:1,64:2048:1,64:4096:1,64:8192:1,128:1024:1,128:2048:1
for n in 1 2; do
  timeout 200 python3 benchmarks/attention_gluon_check.py $O/b$n.json --psmem --sweep BALANCED_SWEEP --shapes $S \
    --budget 180 --per-call 60 > $O/b$n.log 2>&1; echo "exit $?"
  grep "median of rounds" $O/b$n.log; grep ERROR $O/b$n.log | head -5
done
