#!/bin/bash
# Twenty-fourth session, run a (H200): can evict_last keep inputs in L2 across the judge's rounds (residency_probe.py,
# judge_probe.py), and the attack tests with the new flush (tests/gpu_run.sh attacks).
O=$OUT
{ nvidia-smi --query-gpu=name --format=csv,noheader; echo "head $HEAD"; } > $O/info.txt; cat $O/info.txt
grep -q H200 $O/info.txt || { echo "not an H200"; exit 3; }
export PYTHONPATH=$PWD FLASHCOURSE_MODE=gpu PYTHONUNBUFFERED=1
SECONDS=0
timeout 150 python3 benchmarks/gpu_2026-11-29_s24/residency_probe.py $O/a1.json > $O/a1.log 2>&1
echo "residency probe exit $? in ${SECONDS}s"; cat $O/a1.log | tail -40
timeout 200 python3 benchmarks/gpu_2026-11-29_s24/judge_probe.py $O/a2.json > $O/a2.log 2>&1
echo "judge probe exit $? at ${SECONDS}s"; tail -8 $O/a2.log | cut -c1-400
OUT=/tmp/gpu timeout 170 bash tests/gpu_run.sh attacks > /tmp/a3.log 2>&1; cp /tmp/gpu/attacks.log $O/a3_attacks.log
echo "attacks exit $? at ${SECONDS}s"; tail -12 /tmp/a3.log
