#!/bin/bash
# Prepared in the fifteenth session, NOT RUN (no device time left): the next step BENCHMARKS.md names for the H200's
# softmax 8192 x 8192 float32 gap. (1) softmax_8192_probe.py once more (the report's harness: Liger-Kernel's kernel
# reads about 98% of copy there, our copy of it about 95.5), keeping the Triton cache it compiled into; every cubin
# of Liger's kernel, of our copy (row_cand) and of our rows kernel disassembled (cuobjdump -sass), for a SASS diff here.
# (2) The same probe under Nsight Compute, the three kernels only, clocks and caches left alone (so that the
# harness's conditions stay), DRAM bytes, L2 hit rate and durations of four launches of each of Liger's function, our
# copy of its kernel, our 16-warp kernel and ours as shipped, after the timed rounds (PROBE_NVTX). About 3-4 minutes.
O=$OUT
{ nvidia-smi --query-gpu=name --format=csv,noheader; echo "head $HEAD"; } > $O/info.txt; cat $O/info.txt
grep -q H200 $O/info.txt || { echo "not an H200"; exit 3; }
pip install -q --no-index --no-deps --target /tmp/liger .whl/liger_kernel-0.8.5-py3-none-any.whl 2>/dev/null
export PYTHONPATH=$PWD:/tmp/liger FLASHCOURSE_MODE=gpu TRITON_CACHE_DIR=/tmp/tc
timeout 150 python3 benchmarks/softmax_8192_probe.py $O/probe.json > $O/probe.log 2>&1; tail -n 16 $O/probe.log
mkdir -p /tmp/sass
for c in $(find /tmp/tc /tmp/torchinductor_root -name "_softmax_single_block_forward_kernel.cubin" -o -name "row_cand.cubin" -o -name "rows_kernel.cubin" 2>/dev/null); do
  d=$(basename $(dirname $c)); cuobjdump -sass $c > /tmp/sass/$(basename $c .cubin)_$d.sass 2>&1
  cp $(dirname $c)/*.json /tmp/sass/$(basename $c .cubin)_$d.json 2>/dev/null
done
ls /tmp/sass | head -40
PROBE_NVTX=1 timeout 240 ncu --clock-control none --cache-control none --target-processes all \
  --nvtx --nvtx-include "probe/" \
  --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct,sm__throughput.avg.pct_of_peak_sustained_elapsed,dram__throughput.avg.pct_of_peak_sustained_elapsed,launch__registers_per_thread,launch__grid_size \
  --csv python3 benchmarks/softmax_8192_probe.py /tmp/ncu_probe.json > $O/ncu.csv 2> $O/ncu.err; tail -n 3 $O/ncu.err
(cd /tmp && tar czf $O/sass.tgz sass)  # at most 8 files come back
