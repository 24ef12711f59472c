#!/bin/bash
# Nineteenth session, run e (H200): the offline compile checks (tests/test_attention_gluon.py under the GPU machine's
# triton 3.6.0: PTX structure and ptxas spills, the lpt configs included) that run d's 100 s did not fit.
O=$OUT
{ nvidia-smi --query-gpu=name --format=csv,noheader; echo "head $HEAD"; } > $O/info.txt; cat $O/info.txt
grep -q H200 $O/info.txt || { echo "not an H200"; exit 3; }
export PYTHONPATH=$PWD FLASHCOURSE_MODE=gpu PYTHONUNBUFFERED=1
SECONDS=0
timeout 400 python3 -m pytest -q -ra -p no:cacheprovider tests/test_attention_gluon.py > $O/pytest.txt 2>&1
echo "pytest rc=$? in ${SECONDS}s"; tail -n 5 $O/pytest.txt
