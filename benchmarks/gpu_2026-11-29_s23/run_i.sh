#!/bin/bash
# Twenty-third session, run i (H200): pred_probe_case.py on RMSNorm 16384 x 4096 bfloat16 with the new flush.
O=$OUT
{ nvidia-smi --query-gpu=name --format=csv,noheader; echo "head $HEAD"; } > $O/info.txt; cat $O/info.txt
grep -q H200 $O/info.txt || { echo "not an H200"; exit 3; }
export PYTHONPATH=$PWD:/tmp/liger FLASHCOURSE_MODE=gpu PYTHONUNBUFFERED=1
pip install -q --no-index --no-deps --target /tmp/liger .whl/liger_kernel-*.whl 2>/dev/null
SECONDS=0
timeout 110 python3 benchmarks/gpu_2026-11-29_s23/pred_probe_case.py rmsnorm 16384 4096 bfloat16 $O/i1.json \
  > $O/i1.log 2>&1; echo "probe exit $? in ${SECONDS}s"; tail -n 12 $O/i1.log
