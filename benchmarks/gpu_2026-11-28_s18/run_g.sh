#!/bin/bash
# Eighteenth session, run g (H200): what run f's time limits cut off: tests/test_attention_gluon.py (run f's pytest
# passed the first 170 tests with no failure, then ran out of its 300 s) and Chapter 4 through nbgrader (14 of 16
# submissions done, none failed, at its 100 s limit), with longer limits.
O=$OUT
{ nvidia-smi --query-gpu=name --format=csv,noheader; echo "head $HEAD"; } > $O/info.txt; cat $O/info.txt
grep -q H200 $O/info.txt || { echo "not an H200"; exit 3; }
pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=$PWD:/tmp/site PATH=/tmp/site/bin:$PATH FLASHCOURSE_MODE=gpu PYTHONUNBUFFERED=1
timeout 250 python3 -m pytest -q -ra -p no:cacheprovider tests/test_attention_gluon.py tests/test_attention_fast.py \
  -k "gluon_p_through or row_sums or three_consumers or gluon_on_hopper or ptx or spill or choose" \
  > $O/pytest.txt 2>&1; echo "pytest rc=$?"; tail -n 6 $O/pytest.txt
timeout 200 python3 -m autograder.cli validate ch04_flash_attention > $O/validate_ch04.log 2>&1; echo "validate rc=$?"
tail -n 3 $O/validate_ch04.log
