#!/bin/bash
# Twenty-third session, run a (H200): (1) D 128 causal T 1024 and 2048, REG_128 with the pin and without, SHORT_128
# with and without, cuDNN beside them (attention_gluon_check.py --psmem --sweep PIN_OFF_SWEEP, one process, medians of
# 3 interleaved rounds); (2) liger_lift_probe.py: is Liger-Kernel's lift on softmax 8192 x 8192 float32 where its
# output lies?
O=$OUT
{ nvidia-smi --query-gpu=name --format=csv,noheader; echo "head $HEAD"; } > $O/info.txt; cat $O/info.txt
grep -q H200 $O/info.txt || { echo "not an H200"; exit 3; }
export PYTHONPATH=$PWD FLASHCOURSE_MODE=gpu PYTHONUNBUFFERED=1
pip install -q --no-index --no-deps --target /tmp/liger .whl/liger_kernel-*.whl
SECONDS=0
timeout 200 python3 benchmarks/attention_gluon_check.py $O/a1.json --psmem --sweep PIN_OFF_SWEEP \
  --shapes 128:1024:1,128:2048:1 --budget 180 --per-call 60 > $O/a1.log 2>&1; echo "exit $? in ${SECONDS}s"
grep "median of rounds\|^D=" $O/a1.log | cut -c1-400; grep ERROR $O/a1.log | head -5
SECONDS=0
PYTHONPATH=$PWD:/tmp/liger timeout 240 python3 benchmarks/gpu_2026-11-29_s23/liger_lift_probe.py $O/a2.json \
  > $O/a2.log 2>&1; echo "liger probe exit $? in ${SECONDS}s"; tail -n 45 $O/a2.log
