#!/bin/bash
# Twenty-fifth session, run d (H200): `flashcourse validate` on the GPU, whole chapters: Chapter 6 (last validated
# whole on an H200 in session 5, before the judge's new flush and warm runners) and Chapter 4.
source benchmarks/gpu_prelude.sh
OUT=/tmp/gpu timeout 560 bash tests/gpu_run.sh validate:ch06_low_precision,ch04_flash_attention > /tmp/d.log 2>&1
echo "d exit $? at ${SECONDS}s"; cp /tmp/gpu/validate.log $O/d_validate.log; grep -E "match|MISMATCH|mismatch" /tmp/d.log | tail -12
