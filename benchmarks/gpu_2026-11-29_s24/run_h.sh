#!/bin/bash
# Twenty-fourth session, run h (H200): the new attack_evict_last_residency against the one-warp kernel it is built on,
# through the real judge (judge_probe_h.py), and GPU validate of the two with the solution.
O=$OUT
{ nvidia-smi --query-gpu=name --format=csv,noheader; echo "head $HEAD"; } > $O/info.txt; cat $O/info.txt
grep -q H200 $O/info.txt || { echo "not an H200"; exit 3; }
export PYTHONPATH=$PWD FLASHCOURSE_MODE=gpu PYTHONUNBUFFERED=1
SECONDS=0
timeout 90 python3 benchmarks/gpu_2026-11-29_s24/judge_probe_h.py $O/h1.json 2>&1 | tail -4
echo "h1 at ${SECONDS}s"
pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl >/dev/null 2>&1
PYTHONPATH=$PYTHONPATH:/tmp/site PATH=/tmp/site/bin:$PATH timeout 150 python3 -m autograder.cli validate ch01_softmax \
  --only solution,wrong-triton-one-warp,wrong-attack-evict-last-residency > $O/h2_validate.log 2>&1
echo "h2 exit $? at ${SECONDS}s"; tail -5 $O/h2_validate.log | cut -c1-220
