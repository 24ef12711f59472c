#!/bin/bash
# Thirteenth session, run f: exp2 partly on the FMA units (flash_attention_gluon Config.emu) against choose()'s config
# and cuDNN, D 64 and 128, T 1024-4096, causal or not, 3 interleaved rounds.
{ nvidia-smi --query-gpu=name --format=csv,noheader; echo "head $HEAD"; } > $OUT/info.txt; cat $OUT/info.txt
export PYTHONPATH=$PWD FLASHCOURSE_MODE=gpu
python3 benchmarks/attention_gluon_check.py $OUT/emu.json --emu --T 1024,2048,4096 --budget 250 --rounds 3 > $OUT/emu.log 2>&1
grep -v "^{" $OUT/emu.log | grep "median of rounds\|ERROR\|x0\|x1" | tail -n 40
