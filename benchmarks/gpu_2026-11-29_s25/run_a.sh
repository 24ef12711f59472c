#!/bin/bash
# Twenty-fifth session, run a (H200): `flashcourse validate` on the GPU, whole chapters: Chapter 5 with the RMSNorm
# bar at 0.75 (set in session 24, not run on a GPU since) and Chapter 2 (never validated whole on an H200).
source benchmarks/gpu_prelude.sh
OUT=/tmp/gpu timeout 560 bash tests/gpu_run.sh validate:ch05_fused_norms,ch02_reductions > /tmp/a.log 2>&1
echo "a exit $? at ${SECONDS}s"; cp /tmp/gpu/validate.log $O/a_validate.log; grep -E "match|mismatch|MISMATCH" /tmp/a.log | tail -8
