#!/bin/bash
# Twenty-fifth session, run b (H200): `flashcourse validate ch03_online_softmax` on the GPU, whole (last whole on an
# H200 in session 7, with 13 submissions; the comment as run said 'never', wrongly), then the benchmark report once (b1), to set beside session 23's committed H200 report.
source benchmarks/gpu_prelude.sh
OUT=/tmp/gpu timeout 300 bash tests/gpu_run.sh validate:ch03_online_softmax > /tmp/b.log 2>&1
echo "b validate exit $? at ${SECONDS}s"; cp /tmp/gpu/validate.log $O/b_validate.log; grep -E "match" /tmp/b.log | tail -4
PYTHONPATH=$PWD:/tmp/liger timeout $((570 - SECONDS)) python3 -m kernels_ref.report --json $O/b1.json --no-render \
  > $O/b1.log 2>&1
echo "b1 exit $? at ${SECONDS}s"; grep -v attention_fwd $O/b1.log | grep "rmsnorm  \|copy" | tail -8
