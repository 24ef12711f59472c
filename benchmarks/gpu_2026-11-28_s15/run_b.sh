#!/bin/bash
# Fifteenth session, run b (H200): liger_function_probe.py (Liger-Kernel's softmax function against its own kernel
# launched directly: CUDA events and the profiler's kernel durations side by side; RMSNorm 16384 x 4096 too).
O=$OUT
{ nvidia-smi --query-gpu=name --format=csv,noheader; echo "head $HEAD"; } > $O/info.txt; cat $O/info.txt
grep -q H200 $O/info.txt || { echo "not an H200"; exit 3; }
pip install -q --no-index --no-deps --target /tmp/liger .whl/liger_kernel-0.8.5-py3-none-any.whl 2>/dev/null
export PYTHONPATH=$PWD:/tmp/liger FLASHCOURSE_MODE=gpu
python3 benchmarks/liger_function_probe.py $O/probe.json > $O/probe.log 2>&1; tail -n 25 $O/probe.log
