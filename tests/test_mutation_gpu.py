"""The GPU side of mutation testing, checked without a GPU: the timed mutants (num_warps=1 on each Triton launch)
and the reuse of an earlier, cut-off --gpu-recheck call's log lines."""
from __future__ import annotations

import re

from autograder.instructor import mutate

CHAPTERS = ("ch01_softmax", "ch02_reductions", "ch03_online_softmax", "ch04_flash_attention", "ch05_fused_norms",
            "ch06_low_precision", "ch07_cross_entropy")


def test_every_triton_exercise_gets_a_timed_mutant_that_changes_only_its_launch_warps():
    triton = {ex.id for ch in CHAPTERS for ex in mutate.chapter_exercises(ch)
              if ex.solution.endswith(".py") and "tl.load" in open(ex.solution).read()}
    timed = [m for ch in CHAPTERS for m in mutate.timed_mutants(ch)]
    assert {m.exercise for m in timed} == triton
    for m in timed:
        changed = [ln for ln in m.diff.splitlines() if ln[:1] in "+-" and not ln.startswith(("+++", "---"))]
        assert len(changed) == 2, m.diff  # one line out, one line in
        old, new = changed[0][1:], changed[1][1:]
        assert re.sub(r"num_warps\s*=\s*[^,)]+", "num_warps=1", old) == new, m.diff
        assert m.rule == "timed_num_warps_1" and m.id.endswith(":timed_num_warps_1")


def test_an_earlier_calls_log_lines_are_reused_and_nothing_else(tmp_path):
    log = tmp_path / "mutgpu.log"
    log.write_text(
        "killed      3.0s a.py:1:2:rule [equivalent on CPU] ch01.x:bandwidth 71% of copy | needs 74%\n"
        "survived    4.0s b.py:3:4:rule [survived on CPU]  \n"
        "killed      1.0s c.py:5:6:rule [timed mutant on CPU] ch01.x:correctness wrong\n"
        "ch01_softmax on NVIDIA H100: 10 rechecked in 26 s\n")
    got = mutate._logged_outcomes(str(log), {"a.py:1:2:rule", "b.py:3:4:rule"})
    assert set(got) == {"a.py:1:2:rule", "b.py:3:4:rule"}  # c is not one of this run's mutants
    assert (got["a.py:1:2:rule"].status, got["a.py:1:2:rule"].by) == ("killed", "ch01.x:bandwidth")
    assert got["a.py:1:2:rule"].message.startswith("71% of copy")
    assert (got["b.py:3:4:rule"].status, got["b.py:3:4:rule"].by) == ("survived", "")
