"""Run All of a blank chapter (the release notebook as a student gets it) reaches its last cell in CPU mode: a test
cell of an unsolved exercise says "not implemented yet" in one line, a demonstration that needs one says what to
solve first, and nothing stops the notebook. Under nbgrader's Validate the same test cells are errors, as they must
be (a blank notebook must not validate)."""
import os

import nbformat
import pytest
from nbclient import NotebookClient

from autograder.instructor.nbtext import chapters
from autograder.layout import ROOT


def _run(chapter: str, tmp_path, env: dict) -> nbformat.NotebookNode:
    nb = nbformat.read(os.path.join(ROOT, "release", chapter, f"{chapter}.ipynb"), 4)
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        NotebookClient(nb, timeout=600, kernel_name="python3", allow_errors=True,
                       resources={"metadata": {"path": str(tmp_path)}}).execute()
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return nb


def _errors(nb) -> list[str]:
    return [f"cell {i}: {o.get('ename')}: {o.get('evalue', '')[:200]}" for i, c in enumerate(nb.cells)
            if c.cell_type == "code" for o in c.get("outputs", []) if o.get("output_type") == "error"]


@pytest.mark.slow
@pytest.mark.parametrize("chapter", chapters())
def test_run_all_of_a_blank_chapter_reaches_its_last_cell(chapter, tmp_path):
    nb = _run(chapter, tmp_path, {"FLASHCOURSE_MODE": "cpu", "PYTHONPATH": ROOT})
    assert _errors(nb) == []
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code[-1].get("execution_count"), "the last cell did not run"
    said = "".join(o.get("text", "") for c in code for o in c.get("outputs", []))
    assert "not implemented yet" in said  # the test cells said so, in a line each


@pytest.mark.slow
def test_under_validate_an_unsolved_exercise_is_an_error(tmp_path):
    chapter = "ch01_softmax"
    nb = _run(chapter, tmp_path, {"FLASHCOURSE_MODE": "cpu", "PYTHONPATH": ROOT, "NBGRADER_EXECUTION": "validate"})
    errors = _errors(nb)
    assert errors and all("CheckFailed" in e for e in errors), errors
    assert any("not implemented yet" in e for e in errors)


def test_a_demo_says_what_to_solve_and_other_errors_still_show(capsys):
    import course

    def softmax_triton(x, y):
        raise NotImplementedError()
    with course.demo():
        softmax_triton(1, 2)
    out = capsys.readouterr().out
    assert "softmax_triton is not written yet" in out and "Solve it above" in out
    with course.demo(example="ch01_softmax_bandwidth"):  # a GPU sweep of unsolved kernels: the recorded figure
        softmax_triton(1, 2)
    assert "as recorded on a GPU" in capsys.readouterr().out
    with pytest.raises(ZeroDivisionError):
        with course.demo():
            1 / 0
