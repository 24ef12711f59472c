#!/bin/bash
# Seventeenth session, run c (H200): choose() now takes WIDE_64 (D 64 not causal: 256-key tiles, persistent, P through
# shared memory) and PERSIST_128 (D 128 not causal up to T 1024). The attention GPU tests (choose()'s configs, the
# P-buffer configs on bf16, fp16 and very negative scores, the offline compile checks under this machine's triton
# 3.6.0), Chapter 4 validated through nbgrader, and Chapter 5's solution and fp8 variant through nbgrader (the
# sixteenth session's fp8 verifier tolerance, not yet run on a GPU).
O=$OUT
{ nvidia-smi --query-gpu=name --format=csv,noheader; echo "head $HEAD"; } > $O/info.txt; cat $O/info.txt
grep -q H200 $O/info.txt || { echo "not an H200"; exit 3; }
pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=$PWD:/tmp/site PATH=/tmp/site/bin:$PATH FLASHCOURSE_MODE=gpu PYTHONUNBUFFERED=1
timeout 330 python3 -m pytest -q -ra -p no:cacheprovider tests/test_attention_fast.py tests/test_attention_gluon.py \
  > $O/pytest.txt 2>&1; echo "pytest rc=$?"; tail -n 12 $O/pytest.txt
timeout 150 python3 -m autograder.cli validate ch04_flash_attention > $O/validate_ch04.log 2>&1; echo "validate rc=$?"
tail -n 3 $O/validate_ch04.log
timeout 100 python3 -m autograder.cli validate ch05_fused_norms --only solution,variant-fp8-cpu-staging \
  > $O/validate_ch05.log 2>&1; echo "validate ch05 rc=$?"; tail -n 3 $O/validate_ch05.log
