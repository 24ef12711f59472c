#!/bin/bash
# Twenty-first session, run g (H200), the kernels as in run c (only comments changed since): the benchmark report
# again in another process (how much the attention ratios move between reports; not committed as the report), and
# the rest of test_attention_fast.py, which run c left unfinished.
O=$OUT
{ nvidia-smi --query-gpu=name --format=csv,noheader; echo "head $HEAD"; } > $O/info.txt; cat $O/info.txt
grep -q H200 $O/info.txt || { echo "not an H200"; exit 3; }
pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl >/dev/null 2>&1
pip install -q --no-index --no-deps --target /tmp/liger .whl/liger_kernel-*.whl 2>/dev/null
export PYTHONPATH=$PWD:/tmp/site:/tmp/liger PATH=/tmp/site/bin:$PATH FLASHCOURSE_MODE=gpu PYTHONUNBUFFERED=1
SECONDS=0
timeout 200 python3 -m kernels_ref.report --no-render > $O/report.log 2>&1
echo "report rc=$? in ${SECONDS}s"; cp benchmarks/results/nvidia_h200.json $O/
grep "copy" $O/report.log | tail -n 1; grep attention_fwd $O/report.log | grep "x64 " | grep "flashcourse\|cudnn"
SECONDS=0
timeout 220 python3 -m pytest -q -ra -p no:cacheprovider tests/test_attention_fast.py \
  -k "not (on_hopper or fp16 or falls_back or seam or three_consumers)" > $O/pytest_fast_rest.txt 2>&1
echo "pytest fast rest rc=$? in ${SECONDS}s"; tail -n 4 $O/pytest_fast_rest.txt
