#!/bin/bash
# Seventeenth session, run d (H200): the full benchmark report (kernels_ref.report: copy, our kernels, torch,
# torch.compile, Liger-Kernel, SDPA flash and cuDNN in one process) with choose()'s new configs (WIDE_64, PERSIST_128).
O=$OUT
{ nvidia-smi --query-gpu=name --format=csv,noheader; echo "head $HEAD"; } > $O/info.txt; cat $O/info.txt
grep -q H200 $O/info.txt || { echo "not an H200"; exit 3; }
pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl >/dev/null 2>&1
pip install -q --no-index --no-deps --target /tmp/liger .whl/liger_kernel-*.whl 2>/dev/null
export PYTHONPATH=$PWD:/tmp/site:/tmp/liger PATH=/tmp/site/bin:$PATH FLASHCOURSE_MODE=gpu PYTHONUNBUFFERED=1
timeout 330 python3 -m kernels_ref.report --no-render > $O/report.log 2>&1
echo "report rc=$?"; cp benchmarks/results/nvidia_h200.json $O/
grep "copy\|ptxas" $O/report.log | tail -n 3; grep attention_fwd $O/report.log | tail -n 60 | grep "flashcourse\|cudnn"
