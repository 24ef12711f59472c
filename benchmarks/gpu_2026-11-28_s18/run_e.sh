#!/bin/bash
# Eighteenth session, run e (H200): row sums kept per thread (Config.lazy_sum, LAZY_SUM_SWEEP: two shuffles a row a tile
# fewer, FA3's choice): its GPU test, then timed against choose()'s config and cuDNN where cuDNN leads (D 64 causal T 1024-16384,
# D 64 and D 128 T 1024 not causal, D 128 T 2048 not causal and T 4096 causal), medians of 3 interleaved rounds.
O=$OUT
{ nvidia-smi --query-gpu=name --format=csv,noheader; echo "head $HEAD"; } > $O/info.txt; cat $O/info.txt
grep -q H200 $O/info.txt || { echo "not an H200"; exit 3; }
pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=$PWD:/tmp/site PATH=/tmp/site/bin:$PATH FLASHCOURSE_MODE=gpu PYTHONUNBUFFERED=1
timeout 200 python3 -m pytest -q -ra -p no:cacheprovider tests/test_attention_fast.py -k "row_sums" \
  > $O/pytest.txt 2>&1; echo "pytest rc=$?"; tail -n 12 $O/pytest.txt
S=64:1024:1,64:2048:1,64:4096:1,64:16384:1,64:1024:0,128:1024:0,128:2048:0,128:4096:1
timeout 320 python3 benchmarks/attention_gluon_check.py $O/lazy.json --psmem --sweep LAZY_SUM_SWEEP --shapes $S \
  --budget 290 --per-call 60 > $O/lazy.log 2>&1; echo "exit $?"
grep -A12 "best Gluon" $O/lazy.log; grep "median of rounds" $O/lazy.log; grep ERROR $O/lazy.log | head -5
