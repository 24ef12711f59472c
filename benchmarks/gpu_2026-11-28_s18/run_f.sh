#!/bin/bash
# Eighteenth session, run f (H200): choose() now takes PERSIST_128 and THREE_128 with row sums kept per thread
# (Config.lazy_sum, run e). The attention GPU tests (every config choose() takes, the sweeps' configs, the offline
# compile checks under this machine's triton 3.6.0), Chapter 4 through nbgrader, and choose() against the same
# configs without (LAZY_SUM_SWEEP[128]) and cuDNN on D 128, in this second process, medians of 3 interleaved rounds.
O=$OUT
{ nvidia-smi --query-gpu=name --format=csv,noheader; echo "head $HEAD"; } > $O/info.txt; cat $O/info.txt
grep -q H200 $O/info.txt || { echo "not an H200"; exit 3; }
pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=$PWD:/tmp/site PATH=/tmp/site/bin:$PATH FLASHCOURSE_MODE=gpu PYTHONUNBUFFERED=1
S=128:1024:0,128:2048:0,128:4096:0,128:4096:1,128:8192:1,128:16384:0
timeout 200 python3 benchmarks/attention_gluon_check.py $O/lazy128.json --psmem --sweep LAZY_SUM_SWEEP --shapes $S \
  --configs BM128-BN128-s2-c2-p-ps1,BM192-BN128-s2-c3-ps1 --budget 180 --per-call 60 > $O/lazy128.log 2>&1
echo "exit $?"; grep -A8 "best Gluon" $O/lazy128.log; grep "median of rounds" $O/lazy128.log; grep ERROR $O/lazy128.log
timeout 300 python3 -m pytest -q -ra -p no:cacheprovider tests/test_attention_fast.py tests/test_attention_gluon.py \
  > $O/pytest.txt 2>&1; echo "pytest rc=$?"; tail -n 6 $O/pytest.txt
timeout 100 python3 -m autograder.cli validate ch04_flash_attention > $O/validate_ch04.log 2>&1; echo "validate rc=$?"
tail -n 3 $O/validate_ch04.log
