#!/bin/bash
# Eighteenth session, run d (H200): where the time goes, cuDNN's SDPA against choose()'s config (the same tiles) on
# D 64 T 1024 causal (0.92x): Nsight Compute's raw metrics of the warp-state, instruction-mix, scheduler and
# compute-workload sections (executed instructions by opcode, stall reasons, pipe use), one launch of each.
O=$OUT
{ nvidia-smi --query-gpu=name --format=csv,noheader; echo "head $HEAD"; } > $O/info.txt; cat $O/info.txt
grep -q H200 $O/info.txt || { echo "not an H200"; exit 3; }
export PYTHONPATH=$PWD FLASHCOURSE_MODE=gpu PYTHONUNBUFFERED=1
timeout 400 ncu --profile-from-start off --clock-control none --section WarpStateStats --section InstructionStats \
  --section SchedulerStats --section ComputeWorkloadAnalysis --section SpeedOfLight --page raw --csv \
  python3 benchmarks/attention_ncu_probe.py 64:1024:1 > $O/ncu_raw.csv 2> $O/ncu.err; echo "ncu rc=$?"
wc -c $O/ncu_raw.csv; tail -3 $O/ncu.err
