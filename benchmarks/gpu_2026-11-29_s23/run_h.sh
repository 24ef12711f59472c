#!/bin/bash
# Twenty-third session, run h (H200): flush_probe.py, which flush leaves L2 cold.
O=$OUT
{ nvidia-smi --query-gpu=name --format=csv,noheader; echo "head $HEAD"; } > $O/info.txt; cat $O/info.txt
grep -q H200 $O/info.txt || { echo "not an H200"; exit 3; }
export PYTHONPATH=$PWD:/tmp/liger FLASHCOURSE_MODE=gpu PYTHONUNBUFFERED=1
pip install -q --no-index --no-deps --target /tmp/liger .whl/liger_kernel-*.whl 2>/dev/null
SECONDS=0
timeout 150 python3 benchmarks/gpu_2026-11-29_s23/flush_probe.py $O/h1.json > $O/h1.log 2>&1
echo "probe exit $? in ${SECONDS}s"; tail -n 8 $O/h1.log
