#!/bin/bash
# Twenty-fourth session, run g (H200): `flashcourse validate ch05_fused_norms` on the GPU with the RMSNorm bar at
# 0.78 (the two-pass-tiles known-slow kernel must lose its bandwidth cell, every reference and variant keep theirs).
O=$OUT
{ nvidia-smi --query-gpu=name --format=csv,noheader; echo "head $HEAD"; } > $O/info.txt; cat $O/info.txt
grep -q H200 $O/info.txt || { echo "not an H200"; exit 3; }
export PYTHONPATH=$PWD FLASHCOURSE_MODE=gpu PYTHONUNBUFFERED=1
SECONDS=0
OUT=/tmp/gpu timeout 400 bash tests/gpu_run.sh validate:ch05_fused_norms > /tmp/g1.log 2>&1
echo "g1 exit $? at ${SECONDS}s"; cp /tmp/gpu/validate.log $O/g1_validate.log; tail -6 /tmp/g1.log | cut -c1-200
