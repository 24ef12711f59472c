#!/bin/bash
# Twenty-third session, run b (H200): (1) report_fresh_probe.py, the report's harness on its softmax cases with ours
# writing a fresh output each call as a fifth impl; (2) the fast attention reference's GPU tests (tests/gpu_run.sh's
# attention step) on choose() with REG_128 for D 128 causal T 1152-2048.
O=$OUT
{ nvidia-smi --query-gpu=name --format=csv,noheader; echo "head $HEAD"; } > $O/info.txt; cat $O/info.txt
grep -q H200 $O/info.txt || { echo "not an H200"; exit 3; }
export PYTHONPATH=$PWD FLASHCOURSE_MODE=gpu PYTHONUNBUFFERED=1
pip install -q --no-index --no-deps --target /tmp/liger .whl/liger_kernel-*.whl 2>/dev/null
SECONDS=0
PYTHONPATH=$PWD:/tmp/liger timeout 170 python3 benchmarks/gpu_2026-11-29_s23/report_fresh_probe.py $O/b1.json \
  > $O/b1.log 2>&1; echo "probe exit $? in ${SECONDS}s"; grep -v "^ *$" $O/b1.log | tail -n 32
OUT=$O ATTN_TIMEOUT=330 bash tests/gpu_run.sh attention
