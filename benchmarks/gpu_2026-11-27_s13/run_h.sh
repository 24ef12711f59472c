#!/bin/bash
# Thirteenth session, run h: the full report as committed (Triton's ptxas pinned, each round in its own shuffled
# order) and the cluster softmax's magnitude test (with the row of maxima just below 2^14).
O=$OUT
{ nvidia-smi --query-gpu=name --format=csv,noheader; echo "head $HEAD"; } > $O/info.txt; cat $O/info.txt
pip install -q --no-index --no-deps --target /tmp/liger .whl/liger_kernel-0.8.5-py3-none-any.whl 2>/dev/null
export PYTHONPATH=$PWD:/tmp/liger FLASHCOURSE_MODE=gpu
timeout 120 python3 -m pytest -q -p no:cacheprovider tests/test_softmax_cluster.py -k "magnitudes or nan or minus" > $O/pytest.txt 2>&1
tail -n 2 $O/pytest.txt
python3 -m kernels_ref.report --no-render > $O/report.log 2>&1
cp benchmarks/results/*.json $O/
grep "copy\|ptxas" $O/report.log | tail -n 3
