"""The instructor's command line (class grading end to end: tests/test_classgrade.py)."""

import pytest



def test_chapters_by_unique_prefix():

    from autograder.instructor.cli import _chapters
    assert _chapters(["ch02", "ch03_online_softmax"]) == ["ch02_reductions", "ch03_online_softmax"]
    with pytest.raises(SystemExit):
        _chapters(["ch0"])  # ambiguous
