#!/bin/bash
# Sixteenth session, run a (H200): P through shared memory (Config.p_bufs) and three consumer warpgroups,
# flash_attention_gluon.PSMEM_SWEEP, against choose()'s config and cuDNN on the shapes where the H200 report (s13h)
# has us behind cuDNN: D 64 at T 1024, 2048, 4096, 16384 (causal and not), D 128 not causal T 1024 and 2048.
# Each config checked against fp32 on small inputs (persistent ones also on 3 SMs) and against SDPA on the timed
# shape; medians of 3 interleaved rounds.
O=$OUT
{ nvidia-smi --query-gpu=name --format=csv,noheader; echo "head $HEAD"; } > $O/info.txt; cat $O/info.txt
grep -q H200 $O/info.txt || { echo "not an H200"; exit 3; }
export PYTHONPATH=$PWD FLASHCOURSE_MODE=gpu
S=64:1024:0,64:1024:1,64:2048:0,64:2048:1,64:4096:0,64:4096:1,64:16384:0,64:16384:1,128:1024:0,128:2048:0
python3 benchmarks/attention_gluon_check.py $O/psmem.json --psmem --shapes $S --budget 470 --per-call 60 \
  > $O/psmem.log 2>&1; echo "exit $?"
tail -n 40 $O/psmem.log
