#!/bin/bash
# Twentieth session, run f (H200), after review (kernel code as in run e; check_config and comments changed): the
# offline compile checks under the GPU's triton 3.6.0 (tests/test_attention_gluon.py: PTX, no serialized wgmma, ptxas
# spills, the seam configs included), then the attention GPU tests run e left out (P through shared memory, the
# balanced schedules, row sums per thread, the new configs), which run the persistent loop the seams changed.
O=$OUT
{ nvidia-smi --query-gpu=name --format=csv,noheader; echo "head $HEAD"; } > $O/info.txt; cat $O/info.txt
grep -q H200 $O/info.txt || { echo "not an H200"; exit 3; }
export PYTHONPATH=$PWD FLASHCOURSE_MODE=gpu PYTHONUNBUFFERED=1
SECONDS=0
timeout 130 python3 -m pytest -q -ra -p no:cacheprovider tests/test_attention_gluon.py > $O/pytest_gluon.txt 2>&1
echo "pytest gluon rc=$? in ${SECONDS}s"; tail -n 3 $O/pytest_gluon.txt
SECONDS=0
timeout 140 python3 -m pytest -q -ra -p no:cacheprovider tests/test_attention_fast.py \
  -k "p_through or balanced_schedule or row_sums or new_configs" > $O/pytest_fast.txt 2>&1
echo "pytest fast rc=$? in ${SECONDS}s"; tail -n 4 $O/pytest_fast.txt
