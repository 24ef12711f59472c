#!/bin/bash
# Nineteenth session, run d (H200): the full benchmark report (kernels_ref.report: copy, our kernels, torch,
# torch.compile, Liger-Kernel, SDPA flash and cuDNN in one process) with choose()'s configs as they now are (row sums per
# thread for D 128 since s18, the lpt schedule for D 64 causal), then validate ch04 through nbgrader, then the offline
# compile checks (test_attention_gluon.py, triton 3.6.0) that run c had no time left for.
O=$OUT
{ nvidia-smi --query-gpu=name --format=csv,noheader; echo "head $HEAD"; } > $O/info.txt; cat $O/info.txt
grep -q H200 $O/info.txt || { echo "not an H200"; exit 3; }
pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl >/dev/null 2>&1
pip install -q --no-index --no-deps --target /tmp/liger .whl/liger_kernel-*.whl 2>/dev/null
export PYTHONPATH=$PWD:/tmp/site:/tmp/liger PATH=/tmp/site/bin:$PATH FLASHCOURSE_MODE=gpu PYTHONUNBUFFERED=1
SECONDS=0
timeout 340 python3 -m kernels_ref.report --no-render > $O/report.log 2>&1
echo "report rc=$? in ${SECONDS}s"; cp benchmarks/results/nvidia_h200.json $O/
grep "copy\|ptxas" $O/report.log | tail -n 3; grep attention_fwd $O/report.log | tail -n 60 | grep "flashcourse\|cudnn"
SECONDS=0
timeout 130 python3 -m autograder.cli validate ch04_flash_attention > $O/validate_ch04.log 2>&1
echo "validate rc=$? in ${SECONDS}s"; tail -n 4 $O/validate_ch04.log
timeout 100 python3 -m pytest -q -ra -p no:cacheprovider tests/test_attention_gluon.py > $O/pytest.txt 2>&1
echo "pytest rc=$?"; tail -n 5 $O/pytest.txt
