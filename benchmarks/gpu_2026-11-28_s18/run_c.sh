#!/bin/bash
# Eighteenth session, run c (H200): one release a key tile (Config.merged, MERGED_SWEEP: one warpgroup barrier a tile
# fewer): its GPU test, then timed against choose()'s config and cuDNN where cuDNN leads (D 64 causal T 1024-8192,
# D 128 causal T 1024-2048, D 64 and D 128 T 1024 not causal), medians of 3 interleaved rounds.
O=$OUT
{ nvidia-smi --query-gpu=name --format=csv,noheader; echo "head $HEAD"; } > $O/info.txt; cat $O/info.txt
grep -q H200 $O/info.txt || { echo "not an H200"; exit 3; }
pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=$PWD:/tmp/site PATH=/tmp/site/bin:$PATH FLASHCOURSE_MODE=gpu PYTHONUNBUFFERED=1
timeout 200 python3 -m pytest -q -ra -p no:cacheprovider tests/test_attention_fast.py -k "one_release" \
  > $O/pytest.txt 2>&1; echo "pytest rc=$?"; tail -n 12 $O/pytest.txt
S=64:1024:1,64:2048:1,64:4096:1,64:8192:1,128:1024:1,128:2048:1,64:1024:0,128:1024:0
timeout 320 python3 benchmarks/attention_gluon_check.py $O/merged.json --psmem --sweep MERGED_SWEEP --shapes $S \
  --budget 290 --per-call 60 > $O/merged.log 2>&1; echo "exit $?"
grep -A12 "best Gluon" $O/merged.log; grep "median of rounds" $O/merged.log; grep ERROR $O/merged.log | head -5
