#!/bin/bash
# Fourteenth session's grader changes, on a GPU (written without one; nothing here has run yet): the timed batch's
# bound primitives and tamper check after capture, the judge's seal over the output arena, the three ch01 attacks
# (skip_replays, unwaited_batch, forged_timing) and the GPU attack tests, beside the known-slow one-warp kernel
# and the solution. Needs HEAD=<hash> and .whl/ (flashcourse wheelhouse) carried. About 6-8 minutes.
O=$OUT
{ nvidia-smi --query-gpu=name --format=csv,noheader; echo "head $HEAD"; } > $O/info.txt; cat $O/info.txt
pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl 2>/dev/null
export PATH=/tmp/site/bin:$PATH PYTHONPATH=$PWD:/tmp/site FLASHCOURSE_MODE=gpu
timeout 300 python3 -m pytest -q -p no:cacheprovider -ra tests/test_attacks.py > $O/attacks.txt 2>&1
tail -n 8 $O/attacks.txt
FLASHCOURSE_VALIDATE_JSON=$O/validate.json timeout 280 python3 -m autograder.cli validate ch01_softmax \
  --only solution,wrong-triton-one-warp,wrong-attack-skip-replays,wrong-attack-unwaited-batch,wrong-attack-forged-timing \
  > $O/validate.log 2>&1
tail -n 9 $O/validate.log
