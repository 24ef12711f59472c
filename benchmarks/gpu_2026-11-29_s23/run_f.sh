#!/bin/bash
# Twenty-third session, run f (H200): course.timing.flush_l2 now reads its buffer with evict_last first (and gives
# the lines the normal priority back). (1) pred_probe.py again: is the lift after torch.compile gone? (2) the report
# (choose() with REG_128 for D 128 causal T 1152-2048, the new flush); (3) tests/test_timing.py on the GPU.
O=$OUT
{ nvidia-smi --query-gpu=name --format=csv,noheader; echo "head $HEAD"; } > $O/info.txt; cat $O/info.txt
grep -q H200 $O/info.txt || { echo "not an H200"; exit 3; }
export PYTHONPATH=$PWD FLASHCOURSE_MODE=gpu PYTHONUNBUFFERED=1
pip install -q --no-index --no-deps --target /tmp/liger .whl/liger_kernel-*.whl 2>/dev/null
SECONDS=0
timeout 60 python3 -m pytest -q -p no:cacheprovider tests/test_timing.py 2>&1 | tail -2
PYTHONPATH=$PWD:/tmp/liger timeout 150 python3 benchmarks/gpu_2026-11-29_s23/pred_probe.py $O/f1.json \
  > $O/f1.log 2>&1; echo "probe exit $? in ${SECONDS}s"; tail -n 15 $O/f1.log
OUT=$O bash tests/gpu_run.sh report > $O/report_step.log 2>&1; echo "report step in ${SECONDS}s"
grep -i "copy\|attention_fwd\|softmax \[8192" $O/report.log | head -60
