#!/bin/bash
# Fifteenth session, run f (H200): compile_lift_probe.py (does torch.compile having run lift Liger's softmax kernel?).
O=$OUT
{ nvidia-smi --query-gpu=name --format=csv,noheader; echo "head $HEAD"; } > $O/info.txt; cat $O/info.txt
grep -q H200 $O/info.txt || { echo "not an H200"; exit 3; }
pip install -q --no-index --no-deps --target /tmp/liger .whl/liger_kernel-0.8.5-py3-none-any.whl 2>/dev/null
export PYTHONPATH=$PWD:/tmp/liger FLASHCOURSE_MODE=gpu
timeout 200 python3 benchmarks/compile_lift_probe.py $O/lift.json > $O/lift.log 2>&1; tail -n 8 $O/lift.log
