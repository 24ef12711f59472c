#!/bin/bash
# Twenty-fourth session, run f (H200): the register cap A/B (cap_ab.py: SASS compared, 8 interleaved rounds) and
# Chapter 5's exercises on the judge's clock with their known-slow submissions (python -m kernels_ref.bench --chapter
# ch05: run e's GPU validate found the two-pass-tiles RMSNorm passing its 72% bar on this GPU).
O=$OUT
{ nvidia-smi --query-gpu=name --format=csv,noheader; echo "head $HEAD"; } > $O/info.txt; cat $O/info.txt
grep -q H200 $O/info.txt || { echo "not an H200"; exit 3; }
pip install -q --no-index --no-deps --target /tmp/liger .whl/liger_kernel-*.whl 2>/dev/null
export PYTHONPATH=$PWD FLASHCOURSE_MODE=gpu PYTHONUNBUFFERED=1
SECONDS=0
PYTHONPATH=$PWD:/tmp/liger timeout 120 python3 benchmarks/gpu_2026-11-29_s24/cap_ab.py $O/f1.json 2>&1 | tail -6
echo "f1 at ${SECONDS}s"
timeout 330 python3 -m kernels_ref.bench --chapter ch05 --json $O/f2.json > $O/f2.log 2>&1
echo "f2 exit $? at ${SECONDS}s"; grep -iE "rmsnorm|wrong|variant" $O/f2.log | tail -30
