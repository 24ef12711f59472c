#!/bin/bash
# Twenty-second session, run g (H200): the GPU tests after b631282 (_consume's epilogue through _store_output; the
# machine code of choose()'s 20 kernels the same as before, offline) and the merged softmax-variants test (row sums per
# thread and the pin, now all on 3 SMs in float16): choose()'s configs, the seams, the softmax variants.
O=$OUT
{ nvidia-smi --query-gpu=name --format=csv,noheader; echo "head $HEAD"; } > $O/info.txt; cat $O/info.txt
grep -q H200 $O/info.txt || { echo "not an H200"; exit 3; }
export PYTHONPATH=$PWD FLASHCOURSE_MODE=gpu PYTHONUNBUFFERED=1
SECONDS=0
timeout 300 python3 -m pytest -q -ra -p no:cacheprovider tests/test_attention_fast.py \
  -k "on_hopper or fp16 or falls_back or seam or three_consumers or softmax_variants" > $O/pytest_fast.txt 2>&1
echo "pytest fast rc=$? in ${SECONDS}s"; tail -n 4 $O/pytest_fast.txt
