#!/bin/bash
# Twenty-fourth session, run b (H200): evict_last residency with the other rows at the default policy (b1 generic,
# b2 through the judge); the RMSNorm candidates beside the report's impls (b3, liger_gap_sweep.py); Chapter 6's
# cross-entropy bench with the new flush (b4); `flashcourse validate ch01_softmax` on the GPU (b5).
O=$OUT
{ nvidia-smi --query-gpu=name --format=csv,noheader; echo "head $HEAD"; } > $O/info.txt; cat $O/info.txt
grep -q H200 $O/info.txt || { echo "not an H200"; exit 3; }
pip install -q --no-index --no-deps --target /tmp/liger .whl/liger_kernel-*.whl 2>/dev/null
export PYTHONPATH=$PWD FLASHCOURSE_MODE=gpu PYTHONUNBUFFERED=1
SECONDS=0
timeout 80 python3 benchmarks/gpu_2026-11-29_s24/residency_probe.py $O/b1.json --rest default --mults 4 > /tmp/b1.log 2>&1
echo "b1 exit $? in ${SECONDS}s"; grep "set " /tmp/b1.log
timeout 120 python3 benchmarks/gpu_2026-11-29_s24/judge_probe.py $O/b2.json b > /tmp/b2.log 2>&1
echo "b2 exit $? at ${SECONDS}s"; cut -c1-120 /tmp/b2.log | tail -8
PYTHONPATH=$PWD:/tmp/liger timeout 150 python3 benchmarks/liger_gap_sweep.py $O/b3.json --only rmsnorm --rounds 3 --peers > $O/b3.log 2>&1
echo "b3 exit $? at ${SECONDS}s"; tail -5 $O/b3.log
PYTHONPATH=$PWD:/tmp/liger timeout 90 python3 benchmarks/ch06_ce_bench.py $O/b4.json > $O/b4.log 2>&1
echo "b4 exit $? at ${SECONDS}s"; tail -25 $O/b4.log
OUT=/tmp/gpu timeout $((545 - SECONDS)) bash tests/gpu_run.sh validate:ch01_softmax > /tmp/b5.log 2>&1
echo "b5 exit $? at ${SECONDS}s"; cp /tmp/gpu/validate.log $O/b5_validate.log; tail -30 /tmp/b5.log
