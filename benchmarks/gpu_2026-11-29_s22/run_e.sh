#!/bin/bash
# Twenty-second session, run e (H200): the benchmark report again in another process (run d's code), to see which of
# its ratios hold.
O=$OUT
{ nvidia-smi --query-gpu=name --format=csv,noheader; echo "head $HEAD"; } > $O/info.txt; cat $O/info.txt
grep -q H200 $O/info.txt || { echo "not an H200"; exit 3; }
pip install -q --no-index --no-deps --target /tmp/liger .whl/liger_kernel-*.whl 2>/dev/null
export PYTHONPATH=$PWD:/tmp/liger FLASHCOURSE_MODE=gpu PYTHONUNBUFFERED=1
SECONDS=0
timeout 220 python3 -m kernels_ref.report --no-render > $O/report.log 2>&1
echo "report rc=$? in ${SECONDS}s"; cp benchmarks/results/nvidia_h200.json $O/
grep "copy" $O/report.log | tail -n 2; grep attention_fwd $O/report.log | tail -n 60 | grep "flashcourse\|cudnn"
