#!/bin/bash
# Twentieth session, run b (H200): run a's causal failures of Config.overlap with two query buffers, narrowed
# (seam_debug.py: per 64-row block errors, one process per case, compute-sanitizer on the smallest); then the sweep
# run a did not reach: OVERLAP_SWEEP without the mask (D 64 T 1024-4096, D 128 T 1024), and with the mask its configs
# without overlap (QBUF_SWEEP; D 64 T 1024-4096, D 128 T 2048), medians of 3 interleaved rounds.
O=$OUT
{ nvidia-smi --query-gpu=name --format=csv,noheader; echo "head $HEAD"; } > $O/info.txt; cat $O/info.txt
grep -q H200 $O/info.txt || { echo "not an H200"; exit 3; }
export PYTHONPATH=$PWD FLASHCOURSE_MODE=gpu PYTHONUNBUFFERED=1
D=benchmarks/gpu_2026-11-29_s20/seam_debug.py
for c in "q2ov 256 1" "q1ov 256 1" "q2 256 1" "q2ov 512 1" "q2ov 512 2" "q2ov 1024 1" "q2ov 256 1 1 2 64" "q2ov 384 1"; do
  echo "== $c"; timeout 60 python3 $D $c 2>&1 | grep -v "^\s*$" | tail -6
done > $O/debug.txt; cat $O/debug.txt
timeout 120 compute-sanitizer --tool memcheck python3 $D q2ov 256 1 > $O/sanitizer.txt 2>&1; echo "sanitizer rc=$?"
grep -v "^\s*$" $O/sanitizer.txt | head -30
S=64:1024:0,64:2048:0,64:4096:0,128:1024:0
timeout 200 python3 benchmarks/attention_gluon_check.py $O/b1.json --psmem --sweep OVERLAP_SWEEP --shapes $S \
  --budget 180 --per-call 60 > $O/b1.log 2>&1; echo "exit $?"
grep "median of rounds" $O/b1.log; grep ERROR $O/b1.log | head -5
S=64:1024:1,64:2048:1,64:4096:1,128:2048:1
timeout 170 python3 benchmarks/attention_gluon_check.py $O/b2.json --psmem --sweep QBUF_SWEEP --shapes $S \
  --budget 150 --per-call 60 > $O/b2.log 2>&1; echo "exit $?"
grep "median of rounds" $O/b2.log; grep ERROR $O/b2.log | head -5
