#!/bin/bash
# Eighteenth session, run a (H200): the staggered schedule (Config.stagger, STAGGER_SWEEP; not causal): its GPU test
# (bf16 against float64, several heads a CTA, fp16, very negative scores), then timed against choose()'s config and
# cuDNN on the non-causal shapes, medians of 3 interleaved rounds.
O=$OUT
{ nvidia-smi --query-gpu=name --format=csv,noheader; echo "head $HEAD"; } > $O/info.txt; cat $O/info.txt
grep -q H200 $O/info.txt || { echo "not an H200"; exit 3; }
pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=$PWD:/tmp/site PATH=/tmp/site/bin:$PATH FLASHCOURSE_MODE=gpu PYTHONUNBUFFERED=1
timeout 200 python3 -m pytest -q -ra -p no:cacheprovider tests/test_attention_fast.py -k stagger \
  > $O/pytest.txt 2>&1; echo "pytest rc=$?"; tail -n 12 $O/pytest.txt
S=64:1024:0,64:2048:0,64:4096:0,64:16384:0,128:1024:0,128:2048:0,128:4096:0,128:16384:0
timeout 320 python3 benchmarks/attention_gluon_check.py $O/stagger.json --psmem --sweep STAGGER_SWEEP --shapes $S \
  --budget 290 --per-call 60 > $O/stagger.log 2>&1; echo "exit $?"
grep -A12 "best Gluon" $O/stagger.log; grep "median of rounds" $O/stagger.log; grep ERROR $O/stagger.log | head -5
