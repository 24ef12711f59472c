#!/bin/bash
# Sixteenth session, run c (H200): choose() now takes three consumer warpgroups with P through shared memory
# (THREE_128 for D 128 from T 2048, causal from 4096; THREE_64 for D 64 from T 8192). The attention GPU tests (the
# new long-sequence ones, the sweep's configs at partial query tiles, the offline compile checks under this
# machine's triton 3.6.0), Chapter 4 validated through nbgrader, then the full report (Triton's ptxas pinned).
O=$OUT
{ nvidia-smi --query-gpu=name --format=csv,noheader; echo "head $HEAD"; } > $O/info.txt; cat $O/info.txt
grep -q H200 $O/info.txt || { echo "not an H200"; exit 3; }
pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl >/dev/null 2>&1
pip install -q --no-index --no-deps --target /tmp/liger .whl/liger_kernel-*.whl 2>/dev/null
export PYTHONPATH=$PWD:/tmp/site PATH=/tmp/site/bin:$PATH FLASHCOURSE_MODE=gpu PYTHONUNBUFFERED=1
timeout 200 python3 -m pytest -q -ra -p no:cacheprovider tests/test_attention_fast.py tests/test_attention_gluon.py \
  > $O/pytest.txt 2>&1; echo "pytest rc=$?"; tail -n 12 $O/pytest.txt
timeout 150 python3 -m autograder.cli validate ch04_flash_attention > $O/validate.log 2>&1; echo "validate rc=$?"
tail -n 8 $O/validate.log
PYTHONPATH=$PYTHONPATH:/tmp/liger timeout 230 python3 -m kernels_ref.report --no-render > $O/report.log 2>&1
echo "report rc=$?"; cp benchmarks/results/nvidia_h200.json $O/
grep "copy\|ptxas" $O/report.log | tail -n 3; grep attention_fwd $O/report.log | tail -n 60 | grep "flashcourse\|cudnn"
