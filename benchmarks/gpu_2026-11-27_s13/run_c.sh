#!/bin/bash
# Thirteenth session, run c: the full report with one ptxas for every Triton kernel (report.py's default, Triton's
# own); on an H200 also the SC_FAST bfloat16 fallback's GPU tests and the cluster sweep.
O=$OUT; L=$O/all.log
{ nvidia-smi --query-gpu=name --format=csv,noheader; echo "head $HEAD"; } > $O/info.txt; cat $O/info.txt
[ -n "$NEED" ] && { grep -q "$NEED" $O/info.txt || exit 3; }  # run d: an H200 or nothing
pip install -q --no-index --no-deps --target /tmp/liger .whl/liger_kernel-0.8.5-py3-none-any.whl 2>/dev/null
export PYTHONPATH=$PWD:/tmp/liger FLASHCOURSE_MODE=gpu
python3 -m kernels_ref.report --no-render > $O/report.log 2>&1
cp benchmarks/results/*.json $O/
if grep -q H200 $O/info.txt; then
  timeout 200 python3 -m pytest -q -p no:cacheprovider tests/test_softmax_cluster.py > $O/pytest.txt 2>&1
  python3 benchmarks/softmax_cluster_sweep.py $O/cluster.json > $L 2>&1
  tail -n 3 $O/pytest.txt; grep -v '^{' $L | tail -n 8
fi
grep "softmax\|copy" $O/report.log | grep "flashcourse\|liger\|copy"
