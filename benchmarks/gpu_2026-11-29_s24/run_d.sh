#!/bin/bash
# Twenty-fourth session, run d (H200): RMSNorm with a register cap (maxnreg 48 / 40 at 8 warps: 5 / 6 programs an SM
# instead of 4) beside ours, Liger-Kernel, torch and torch.compile, 5 interleaved rounds (liger_gap_sweep.py).
O=$OUT
{ nvidia-smi --query-gpu=name --format=csv,noheader; echo "head $HEAD"; } > $O/info.txt; cat $O/info.txt
grep -q H200 $O/info.txt || { echo "not an H200"; exit 3; }
pip install -q --no-index --no-deps --target /tmp/liger .whl/liger_kernel-*.whl 2>/dev/null
export PYTHONPATH=$PWD:/tmp/liger FLASHCOURSE_MODE=gpu PYTHONUNBUFFERED=1
SECONDS=0
timeout 200 python3 benchmarks/liger_gap_sweep.py $O/d1.json --only rmsnorm --rounds 5 --peers > $O/d1.log 2>&1
echo "d1 exit $? in ${SECONDS}s"; tail -5 $O/d1.log
