#!/bin/bash
# Fifteenth session, run d (H200): output_placement_probe.py in two processes (softmax 8192 x 8192 float32: Liger's
# kernel and ours into eight outputs and from two inputs: does the output's placement decide the reading?).
O=$OUT
{ nvidia-smi --query-gpu=name --format=csv,noheader; echo "head $HEAD"; } > $O/info.txt; cat $O/info.txt
grep -q H200 $O/info.txt || { echo "not an H200"; exit 3; }
pip install -q --no-index --no-deps --target /tmp/liger .whl/liger_kernel-0.8.5-py3-none-any.whl 2>/dev/null
export PYTHONPATH=$PWD:/tmp/liger FLASHCOURSE_MODE=gpu
for r in 1 2; do python3 benchmarks/output_placement_probe.py $O/placement_$r.json > $O/placement_$r.log 2>&1; tail -n 19 $O/placement_$r.log; done
