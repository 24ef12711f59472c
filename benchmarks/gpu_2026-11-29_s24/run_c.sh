#!/bin/bash
# Twenty-fourth session, run c (H200): Chapter 6's cross-entropy hints, each variant timed with course.timing's flush
# as it is now and with the memset-only flush of before session 23, in one process (ch06_ce_hints.py
# --memset-flush-too): were the chapter's "two passes + L2 hints" numbers lifted by the previous call's evict_last lines?
O=$OUT
{ nvidia-smi --query-gpu=name --format=csv,noheader; echo "head $HEAD"; } > $O/info.txt; cat $O/info.txt
grep -q H200 $O/info.txt || { echo "not an H200"; exit 3; }
export PYTHONPATH=$PWD FLASHCOURSE_MODE=gpu PYTHONUNBUFFERED=1
SECONDS=0
timeout 400 python3 benchmarks/ch06_ce_hints.py $O/c1.json --memset-flush-too > $O/c1.log 2>&1
echo "c1 exit $? in ${SECONDS}s"; cat $O/c1.log
