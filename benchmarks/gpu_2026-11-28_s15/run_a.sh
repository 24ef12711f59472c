#!/bin/bash
# Fifteenth session, run a (H200): the two probes of the twelfth session's "next" for the H200's softmax 8192 x 8192
# float32 gap (Liger-Kernel +2.3 points in this session's H200 report, directory s13h): placement_probe.py --h200-gaps (Liger's
# function and its kernel launched directly, our candidates, torch and torch.compile beside them, then a 2 ms gate),
# and liger_gap_sweep.py with and without --peers for softmax and RMSNorm (RMSNorm 16384 x 4096 bfloat16: -0.8).
O=$OUT
{ nvidia-smi --query-gpu=name --format=csv,noheader; echo "head $HEAD"; } > $O/info.txt; cat $O/info.txt
grep -q H200 $O/info.txt || { echo "not an H200"; exit 3; }
pip install -q --no-index --no-deps --target /tmp/liger .whl/liger_kernel-0.8.5-py3-none-any.whl 2>/dev/null
export PYTHONPATH=$PWD:/tmp/liger FLASHCOURSE_MODE=gpu
python3 benchmarks/placement_probe.py $O/placement.json --h200-gaps > $O/placement.log 2>&1; tail -n 30 $O/placement.log
for r in 1 2; do
  python3 benchmarks/liger_gap_sweep.py $O/peers_$r.json --rounds 3 --only softmax,rmsnorm --peers > $O/peers_$r.log 2>&1
  python3 benchmarks/liger_gap_sweep.py $O/nopeers_$r.json --rounds 3 --only softmax,rmsnorm > $O/nopeers_$r.log 2>&1
done
tail -n 7 $O/peers_1.log $O/nopeers_1.log $O/peers_2.log $O/nopeers_2.log
(cd $O && tar czf sweeps.tgz peers_* nopeers_* && rm peers_* nopeers_*)  # at most 8 files come back
