#!/bin/bash
# Twenty-second session, run d (H200): choose() with the pin (SEAM_PIN_64, SEAM_LS_PIN_64, REG_PIN_128): the full
# benchmark report, validate ch04 through nbgrader, the GPU tests of choose()'s configs, the seams and the pin.
O=$OUT
{ nvidia-smi --query-gpu=name --format=csv,noheader; echo "head $HEAD"; } > $O/info.txt; cat $O/info.txt
grep -q H200 $O/info.txt || { echo "not an H200"; exit 3; }
pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl >/dev/null 2>&1
pip install -q --no-index --no-deps --target /tmp/liger .whl/liger_kernel-*.whl 2>/dev/null
export PYTHONPATH=$PWD:/tmp/site:/tmp/liger PATH=/tmp/site/bin:$PATH FLASHCOURSE_MODE=gpu PYTHONUNBUFFERED=1
SECONDS=0
timeout 200 python3 -m kernels_ref.report --no-render > $O/report.log 2>&1
echo "report rc=$? in ${SECONDS}s"; cp benchmarks/results/nvidia_h200.json $O/
grep "copy\|ptxas" $O/report.log | tail -n 3; grep attention_fwd $O/report.log | tail -n 60 | grep "flashcourse\|cudnn"
SECONDS=0
timeout 130 python3 -m autograder.cli validate ch04_flash_attention > $O/validate_ch04.log 2>&1
echo "validate rc=$? in ${SECONDS}s"; tail -n 2 $O/validate_ch04.log
SECONDS=0
timeout 200 python3 -m pytest -q -ra -p no:cacheprovider tests/test_attention_fast.py \
  -k "on_hopper or fp16 or falls_back or seam or three_consumers or pin" > $O/pytest_fast.txt 2>&1
echo "pytest fast rc=$? in ${SECONDS}s"; tail -n 4 $O/pytest_fast.txt
