#!/bin/bash
# Fifteenth session, run e (H200): the fourteenth session's grading changes (bound primitives, the tamper check after
# capture, the judge's seal over the output arena) on every other chapter's timed checks: the solutions of chapters
# 2-6 through nbgrader in GPU mode (a false positive of the seal would cost a right kernel its bandwidth points),
# with the known-slow one-program row sum (ch02) and one-warp low-precision softmax (ch06) beside them.
O=$OUT
{ nvidia-smi --query-gpu=name --format=csv,noheader; echo "head $HEAD"; } > $O/info.txt; cat $O/info.txt
pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl 2>/dev/null
export PATH=/tmp/site/bin:$PATH PYTHONPATH=$PWD:/tmp/site FLASHCOURSE_MODE=gpu
v() { FLASHCOURSE_VALIDATE_JSON=$O/validate_$1.json timeout $3 python3 -m autograder.cli validate $1 --only $2 > $O/validate_$1.log 2>&1; tail -n 4 $O/validate_$1.log; }
v ch02_reductions solution,wrong-row-sum-triton-one-program 150
v ch03_online_softmax solution 120
v ch04_flash_attention solution 120
v ch05_fused_norms solution 150
v ch06_low_precision solution,wrong-triton-lowp-one-warp 150
(cd $O && tar czf e.tgz validate_* && rm validate_*)
