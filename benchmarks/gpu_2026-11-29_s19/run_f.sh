#!/bin/bash
# Nineteenth session, run f (H200): after review, the balanced-schedule GPU tests with three consumer warpgroups too
# (192-row query tiles, a partial last one; lpt and tail), and choose()'s tests.
O=$OUT
{ nvidia-smi --query-gpu=name --format=csv,noheader; echo "head $HEAD"; } > $O/info.txt; cat $O/info.txt
grep -q H200 $O/info.txt || { echo "not an H200"; exit 3; }
export PYTHONPATH=$PWD FLASHCOURSE_MODE=gpu PYTHONUNBUFFERED=1
SECONDS=0
timeout 300 python3 -m pytest -q -ra -p no:cacheprovider tests/test_attention_fast.py -k "balanced or schedule or choose or on_hopper or long_sequences" > $O/pytest.txt 2>&1
echo "pytest rc=$? in ${SECONDS}s"; tail -n 5 $O/pytest.txt
