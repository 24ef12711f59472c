#!/bin/bash
# Fifteenth session, run c (H200): softmax_8192_probe.py in three processes (which of warps, the load's and the
# store's cache operators and the arithmetic make Liger-Kernel's row kernel faster than ours at 8192 float32), then
# the report's RMSNorm and softmax cases in two more processes (is RMSNorm 16384 x 4096's -0.8 a process effect?).
O=$OUT
{ nvidia-smi --query-gpu=name --format=csv,noheader; echo "head $HEAD"; } > $O/info.txt; cat $O/info.txt
grep -q H200 $O/info.txt || { echo "not an H200"; exit 3; }
pip install -q --no-index --no-deps --target /tmp/liger .whl/liger_kernel-0.8.5-py3-none-any.whl 2>/dev/null
export PYTHONPATH=$PWD:/tmp/liger FLASHCOURSE_MODE=gpu
for r in 1 2 3; do python3 benchmarks/softmax_8192_probe.py $O/probe_$r.json > $O/probe_$r.log 2>&1; tail -n 20 $O/probe_$r.log; done
for r in 1 2; do python3 -m kernels_ref.report --only rmsnorm,softmax --no-render --json $O/report_$r.json > $O/report_$r.log 2>&1; grep "liger\|flashcourse" $O/report_$r.log | grep -v "131072"; done
(cd $O && tar czf c.tgz probe_* report_* && rm probe_* report_*)  # at most 8 files come back
