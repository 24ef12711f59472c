#!/bin/bash
# Twenty-second session, run a (H200): the seam with the next item's first softmax beside the last P V
# (Config.overlap = 2, SEAM_SOFTMAX_SWEEP) against choose() and cuDNN, without the mask, D 64 T 1024-8192 and D 128
# T 1024-2048, in two processes (a1, a2), medians of 3 interleaved rounds each; then the GPU tests of the seams.
O=$OUT
{ nvidia-smi --query-gpu=name --format=csv,noheader; echo "head $HEAD"; } > $O/info.txt; cat $O/info.txt
grep -q H200 $O/info.txt || { echo "not an H200"; exit 3; }
export PYTHONPATH=$PWD FLASHCOURSE_MODE=gpu PYTHONUNBUFFERED=1
S=64:1024:0,64:2048:0,64:4096:0,64:8192:0,128:1024:0,128:2048:0
for n in 1 2; do
  SECONDS=0
  timeout 230 python3 benchmarks/attention_gluon_check.py $O/a$n.json --psmem --sweep SEAM_SOFTMAX_SWEEP --shapes $S \
    --budget 210 --per-call 60 > $O/a$n.log 2>&1; echo "exit $? in ${SECONDS}s"
  grep "median of rounds" $O/a$n.log; grep ERROR $O/a$n.log | head -5
done
SECONDS=0
timeout 100 python3 -m pytest -q -ra -p no:cacheprovider tests/test_attention_fast.py -k "seam" > $O/pytest_seam.txt 2>&1
echo "pytest seam rc=$? in ${SECONDS}s"; tail -n 4 $O/pytest_seam.txt
