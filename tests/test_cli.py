"""The instructor's command line (class grading end to end: tests/test_classgrade.py)."""

import pytest



def test_chapters_by_unique_prefix():

    from autograder.instructor.cli import _chapters
    assert _chapters(["ch02", "ch03_online_softmax"]) == ["ch02_reductions", "ch03_online_softmax"]
    with pytest.raises(SystemExit):
        _chapters(["ch0"])  # ambiguous


def test_autograde_help_states_the_default_workers_per_gpu_the_code_uses(capsys):
    """`flashcourse autograde --help` reads the default from the code that applies it (classgrade.grade_class)."""
    import inspect
    import re

    from autograder.instructor import classgrade
    from autograder.instructor.cli import main
    with pytest.raises(SystemExit):
        main(["autograde", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert f"default: {classgrade.WORKERS_PER_GPU} per visible GPU" in text, text
    assert "WORKERS_PER_GPU * len(gpus)" in inspect.getsource(classgrade.grade_class)
    assert not re.search(r"\b\d+ \* len\(gpus\)", inspect.getsource(classgrade.grade_class))
