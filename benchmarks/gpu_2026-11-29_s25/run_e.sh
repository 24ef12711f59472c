#!/bin/bash
# Twenty-fifth session, run e (H200): the seven Chapter 6 submissions run d's 560 s did not reach
# (`flashcourse validate ch06_low_precision --only ...`, e1), then `validate ch04_flash_attention` whole (e2) with
# what is left of this session's device time.
source benchmarks/gpu_prelude.sh
pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=$PYTHONPATH:/tmp/site PATH=/tmp/site/bin:$PATH
ONLY=wrong-triton-ce-target-read-late,wrong-triton-ce-three-passes,wrong-triton-lowp-ignores-scale,wrong-triton-lowp-no-max
ONLY=$ONLY,wrong-triton-lowp-one-warp,wrong-triton-lowp-padding-counts,wrong-triton-lowp-through-fp16
timeout 300 python3 -m autograder.cli validate ch06_low_precision --only $ONLY > $O/e1_validate.log 2>&1
echo "e1 exit $? at ${SECONDS}s"; tail -1 $O/e1_validate.log | cut -c1-200
timeout $((440 - SECONDS)) python3 -m autograder.cli validate ch04_flash_attention > $O/e2_validate.log 2>&1
echo "e2 exit $? at ${SECONDS}s"; tail -1 $O/e2_validate.log | cut -c1-200
