#!/bin/bash
# Twenty-fifth session, run c (H200): persistent RMSNorm candidates (rms_persistent.py) side by side with Chapter 5's
# reference and Liger-Kernel (rms_persistent_probe.py), both report shapes.
source benchmarks/gpu_prelude.sh
PYTHONPATH=$PWD:/tmp/liger timeout 300 python3 benchmarks/gpu_2026-11-29_s25/rms_persistent_probe.py $O/c1.json \
  > $O/c1.log 2>&1
echo "c1 exit $? at ${SECONDS}s"; grep -v " regs " $O/c1.log | tail -30; grep " regs " $O/c1.log | cut -c1-600
