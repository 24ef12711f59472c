#!/bin/bash
# Twenty-third session, run d (H200): (1) inductor's generated softmax kernel for 8192 x 8192 float32 (its eviction
# policies); (2) l2_ncu_probe.py under Nsight Compute: DRAM bytes of Liger-Kernel's kernel and ours after
# torch.compile, after torch eager, after nothing.
O=$OUT
{ nvidia-smi --query-gpu=name --format=csv,noheader; echo "head $HEAD"; } > $O/info.txt; cat $O/info.txt
grep -q H200 $O/info.txt || { echo "not an H200"; exit 3; }
export PYTHONPATH=$PWD:/tmp/liger FLASHCOURSE_MODE=gpu PYTHONUNBUFFERED=1
pip install -q --no-index --no-deps --target /tmp/liger .whl/liger_kernel-*.whl 2>/dev/null
export TORCHINDUCTOR_CACHE_DIR=/tmp/ind
SECONDS=0
python3 -c "
import torch
x = torch.randn(8192, 8192, device='cuda')
torch.compile(lambda t: torch.softmax(t, dim=-1), dynamic=False)(x)" > $O/d0.log 2>&1
f=$(grep -rl "def triton" /tmp/ind --include=*.py | xargs grep -l "softmax\|amax\|exp" | head -3)
for g in $f; do echo "== $g"; grep -n "tl.load\|tl.store\|triton_heuristics\|def triton\|for r\|R0_BLOCK\|XBLOCK" $g | head -30; done | tee $O/d_inductor.txt
cp $f $O/ 2>/dev/null
echo "inductor dump in ${SECONDS}s"
M=dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct,gpu__time_duration.sum
for pt in "compile liger" "torch liger" "none liger" "compile ours" "torch ours" "none ours"; do
  set -- $pt
  timeout 120 ncu --nvtx --nvtx-include "target/" --cache-control none --clock-control none -k regex:softmax \
    --launch-skip 5 --launch-count 3 --metrics $M --csv python3 benchmarks/gpu_2026-11-29_s23/l2_ncu_probe.py $1 $2 \
    > $O/d_$1_$2.csv 2> $O/d_$1_$2.err
  echo "== $1 -> $2 rc=$? (${SECONDS}s)"; grep "GB/s" $O/d_$1_$2.csv
  grep '"dram__\|"lts__\|"gpu__' $O/d_$1_$2.csv | awk -F'","' '{print $(NF-2), $(NF-1), $NF}' | tr -d '"'
done
