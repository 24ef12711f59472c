#!/bin/bash
# Twenty-third session, run e (H200): evict_probe.py, is the lift after torch.compile lines of x that inductor's
# evict_last loads leave in L2, and does a flush that reads with evict_last remove it.
O=$OUT
{ nvidia-smi --query-gpu=name --format=csv,noheader; echo "head $HEAD"; } > $O/info.txt; cat $O/info.txt
grep -q H200 $O/info.txt || { echo "not an H200"; exit 3; }
export PYTHONPATH=$PWD:/tmp/liger FLASHCOURSE_MODE=gpu PYTHONUNBUFFERED=1
pip install -q --no-index --no-deps --target /tmp/liger .whl/liger_kernel-*.whl 2>/dev/null
SECONDS=0
timeout 200 python3 benchmarks/gpu_2026-11-29_s23/evict_probe.py $O/e1.json > $O/e1.log 2>&1
echo "probe exit $? in ${SECONDS}s"; tail -n 20 $O/e1.log
