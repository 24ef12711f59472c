#!/bin/bash
# Eighteenth session, run b (H200; the probe and the stagger code are in commit 4a2494f): (1) the staggered
# schedule against the same configs without it on as many CTAs as heads and a batch whose K/V fit in L2 (attention_stagger_probe.py): run a's loss, is it the schedule or L2 and
# the grid?; (2) Nsight Compute on cuDNN's SDPA and choose()'s config where cuDNN leads (attention_ncu_probe.py).
O=$OUT
{ nvidia-smi --query-gpu=name --format=csv,noheader; echo "head $HEAD"; } > $O/info.txt; cat $O/info.txt
grep -q H200 $O/info.txt || { echo "not an H200"; exit 3; }
export PYTHONPATH=$PWD FLASHCOURSE_MODE=gpu PYTHONUNBUFFERED=1
timeout 200 python3 benchmarks/attention_stagger_probe.py $O/stagger_probe.json > $O/stagger_probe.log 2>&1
echo "probe rc=$?"; cat $O/stagger_probe.log | tail -30
timeout 300 ncu --profile-from-start off --clock-control none --section LaunchStats --section SpeedOfLight \
  --section WarpStateStats --section Occupancy \
  --metrics sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_xu.sum \
  python3 benchmarks/attention_ncu_probe.py > $O/ncu.txt 2>&1; echo "ncu rc=$?"
grep -E "^  [a-zA-Z_].*\(|shape D|Duration|Grid Size|Block Size|Registers Per|Shared Memory Config|Dynamic Shared|Static Shared|hmma|Compute \(SM\) Throughput|Memory Throughput|Stall|Warp Cycles Per Issued|Achieved Occupancy|pipe_xu" $O/ncu.txt | head -150
