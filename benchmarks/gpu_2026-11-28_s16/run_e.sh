#!/bin/bash
# Sixteenth session, run e (H200): the offline compile checks of tests/test_attention_gluon.py under this machine's
# triton 3.6.0 again (run c failed one: THREE_128 causal's spill loads, 100 B against a 96 B bound, since 128 B), then
# a second full report in another process (kept as report2.json; the committed report is run c's), to see how far
# its attention ratios and the Liger-Kernel gaps move between processes.
O=$OUT
{ nvidia-smi --query-gpu=name --format=csv,noheader; echo "head $HEAD"; } > $O/info.txt; cat $O/info.txt
grep -q H200 $O/info.txt || { echo "not an H200"; exit 3; }
pip install -q --no-index --no-deps --target /tmp/liger .whl/liger_kernel-*.whl 2>/dev/null
export PYTHONPATH=$PWD FLASHCOURSE_MODE=gpu PYTHONUNBUFFERED=1
timeout 200 python3 -m pytest -q -ra -p no:cacheprovider tests/test_attention_gluon.py > $O/pytest.txt 2>&1
echo "pytest rc=$?"; tail -n 3 $O/pytest.txt
PYTHONPATH=$PYTHONPATH:/tmp/liger timeout 300 python3 -m kernels_ref.report --json $O/report2.json --no-render \
  > $O/report2.log 2>&1; echo "report rc=$?"
grep "copy\|ptxas" $O/report2.log | tail -n 2; grep "attention_fwd" $O/report2.log | grep "flashcourse\|cudnn" | tail -n 40
