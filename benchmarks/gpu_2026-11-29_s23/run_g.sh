#!/bin/bash
# Twenty-third session, run g (H200): the report twice, in two processes (g1 committed as the H200 report), with the
# new flush (course.timing.flush_l2) and choose() as in run f; run f's JSON did not come back (8 files a call).
O=$OUT
{ nvidia-smi --query-gpu=name --format=csv,noheader; echo "head $HEAD"; } > $O/info.txt; cat $O/info.txt
grep -q H200 $O/info.txt || { echo "not an H200"; exit 3; }
export PYTHONPATH=$PWD:/tmp/liger FLASHCOURSE_MODE=gpu PYTHONUNBUFFERED=1
pip install -q --no-index --no-deps --target /tmp/liger .whl/liger_kernel-*.whl 2>/dev/null
for k in 1 2; do
  SECONDS=0
  timeout 240 python3 -m kernels_ref.report --json $O/g$k.json --no-render > $O/g$k.log 2>&1
  echo "report $k exit $? in ${SECONDS}s"; grep -v attention_fwd $O/g$k.log | grep "8192x8192\|rmsnorm  \|copy"
done
