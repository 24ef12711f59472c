"""The instructor's `flashcourse autograde` on a course directory with a submitted/ folder."""
import os
import shutil

import nbformat
import pytest

from autograder import nbtext
from autograder.cli import cmd_autograde


@pytest.mark.slow
def test_autograde_a_submitted_folder(tmp_path):
    ch = "ch01_softmax"
    shutil.copy(os.path.join(nbtext.ROOT, "nbgrader_config.py"), tmp_path)
    shutil.copytree(os.path.join(nbtext.ROOT, "source", ch), tmp_path / "source" / ch)
    nb = nbformat.read(nbtext.notebook_path(ch, "release"), 4)  # a student who solved exercise 1 only
    cell = next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "safe_softmax")
    answer = "e = np.exp(x - x.max(-1, keepdims=True))\n    return e / e.sum(-1, keepdims=True)"
    cell.source = cell.source.replace("# YOUR CODE HERE\n    raise NotImplementedError()", answer)
    for c in nb.cells:  # and tried to rewrite a test to pass
        if c.metadata.get("nbgrader", {}).get("grade_id") == "test_softmax_triton":
            c.source = "pass"
    os.makedirs(tmp_path / "submitted" / "alice" / ch)
    nbformat.write(nb, str(tmp_path / "submitted" / "alice" / ch / f"{ch}.ipynb"))
    os.makedirs(tmp_path / "submitted" / "bob" / ch)  # a notebook that is not JSON at all
    (tmp_path / "submitted" / "bob" / ch / f"{ch}.ipynb").write_text('{"cells": [ broken')
    mallory = nbformat.read(nbtext.notebook_path(ch, "release"), 4)  # forges verdicts, then exits
    cell = next(c for c in mallory.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "safe_softmax")
    cell.source = ("import os, json, sys\nprint('@@flashcourse-result@@' + json.dumps({'passed': True}))\n"
                   "sys.__stdout__.flush()\nos._exit(0)\n" + cell.source)
    os.makedirs(tmp_path / "submitted" / "mallory" / ch)
    nbformat.write(mallory, str(tmp_path / "submitted" / "mallory" / ch / f"{ch}.ipynb"))
    cmd_autograde(ch, ["--force"], str(tmp_path))  # bob's notebook fails; the others are graded
    from nbgrader.api import Gradebook
    with Gradebook(f"sqlite:///{tmp_path / 'gradebook.db'}") as gb:
        grades = {g.name: g.score for g in gb.find_submission_notebook(ch, ch, "alice").grades}
        forged = {g.name: g.score for g in gb.find_submission_notebook(ch, ch, "mallory").grades}
        students = {s.id for s in gb.students}
    assert grades["test_safe_softmax"] == 2 and grades["test_safe_softmax_hidden"] == 2
    assert grades["test_softmax_triton"] == 0  # the edited test cell was restored, and fails
    assert sum(forged.values()) == 0, forged  # forged result lines and an exit buy nothing
    assert "alice" in students  # a broken notebook beside hers changed nothing
    assert not os.path.exists(tmp_path / "release" / ch)  # release/ left alone


def test_chapters_by_unique_prefix():
    import pytest

    from autograder.cli import _chapters
    assert _chapters(["ch02", "ch03_online_softmax"]) == ["ch02_reductions", "ch03_online_softmax"]
    with pytest.raises(SystemExit):
        _chapters(["ch0"])  # ambiguous
