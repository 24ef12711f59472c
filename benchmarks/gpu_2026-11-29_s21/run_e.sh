#!/bin/bash
# Run d stopped at once: triton 3.6.0 (the GPU machine's) failed to lower the kernels without the split, which built
# _split_output where the piece word is always 0 (an assertion in ConvertTritonGPUToLLVM); fixed (elif SPLIT). Again:
# Twenty-first session, run e (H200): the last round split by key tiles (Config.split, stream-K): its GPU tests (two
# and three pieces a query tile, repeated launches, the report's shapes) and the seams' tests of the configs it builds
# on; then SPLIT_SWEEP against choose() and cuDNN, D 64 without the mask, T 1024, 2048 and 4096 (where the table falls
# back to whole tiles: a control), in two processes (e1, e2), medians of 3 interleaved rounds each.
O=$OUT
{ nvidia-smi --query-gpu=name --format=csv,noheader; echo "head $HEAD"; } > $O/info.txt; cat $O/info.txt
grep -q H200 $O/info.txt || { echo "not an H200"; exit 3; }
export PYTHONPATH=$PWD FLASHCOURSE_MODE=gpu PYTHONUNBUFFERED=1
SECONDS=0
timeout 150 python3 -m pytest -q -ra -p no:cacheprovider tests/test_attention_fast.py -k "split or item_seams" \
  -x > $O/pytest_split.txt 2>&1
echo "pytest split rc=$? in ${SECONDS}s"; tail -n 15 $O/pytest_split.txt
S=64:1024:0,64:2048:0,64:4096:0
for n in 1 2; do
  timeout 150 python3 benchmarks/attention_gluon_check.py $O/e$n.json --psmem --sweep SPLIT_SWEEP --shapes $S \
    --budget 140 --per-call 60 > $O/e$n.log 2>&1; echo "exit $?"
  grep "median of rounds" $O/e$n.log; grep -i "ERROR\|mismatch" $O/e$n.log | head -5
done
