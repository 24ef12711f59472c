#!/bin/bash
# Twenty-second session, run c (H200): choose()'s configs with the softmax kept beside the warpgroup's own P V
# (Config.pin, PIN_SWEEP) against choose() and cuDNN on every attention shape of the report (D 64 and 128, causal or
# not, T 1024-16384), one process, medians of 3 interleaved rounds; then the GPU tests of the seams and of choose().
O=$OUT
{ nvidia-smi --query-gpu=name --format=csv,noheader; echo "head $HEAD"; } > $O/info.txt; cat $O/info.txt
grep -q H200 $O/info.txt || { echo "not an H200"; exit 3; }
export PYTHONPATH=$PWD FLASHCOURSE_MODE=gpu PYTHONUNBUFFERED=1
SECONDS=0
timeout 420 python3 benchmarks/attention_gluon_check.py $O/c1.json --psmem --sweep PIN_SWEEP \
  --budget 400 --per-call 60 > $O/c1.log 2>&1; echo "exit $? in ${SECONDS}s"
grep "median of rounds\|^D=" $O/c1.log | cut -c1-400; grep ERROR $O/c1.log | head -5
SECONDS=0
timeout 150 python3 -m pytest -q -ra -p no:cacheprovider tests/test_attention_fast.py -k "pin" > $O/pytest_pin.txt 2>&1
echo "pytest pin rc=$? in ${SECONDS}s"; tail -n 4 $O/pytest_pin.txt
