#!/bin/bash
# Twenty-third session, run c (H200): (1) pred_probe.py, does the impl timed just before a kernel move its reading
# (softmax 8192 x 8192 float32); (2) the causal seams' GPU tests run b's 330 s did not reach.
O=$OUT
{ nvidia-smi --query-gpu=name --format=csv,noheader; echo "head $HEAD"; } > $O/info.txt; cat $O/info.txt
grep -q H200 $O/info.txt || { echo "not an H200"; exit 3; }
export PYTHONPATH=$PWD FLASHCOURSE_MODE=gpu PYTHONUNBUFFERED=1
pip install -q --no-index --no-deps --target /tmp/liger .whl/liger_kernel-*.whl 2>/dev/null
SECONDS=0
PYTHONPATH=$PWD:/tmp/liger timeout 150 python3 benchmarks/gpu_2026-11-29_s23/pred_probe.py $O/c1.json \
  > $O/c1.log 2>&1; echo "probe exit $? in ${SECONDS}s"; tail -n 16 $O/c1.log
OUT=$O ATTN_TIMEOUT=200 ATTN_K="item_seams and True or seam_configs" bash tests/gpu_run.sh attention
