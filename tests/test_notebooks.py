"""Notebooks: built from their text, released by nbgrader, in sync, stamped, without outputs."""
import glob
import os

import nbformat
import pytest

from autograder.instructor import nbtext
from autograder.declare import registry
from autograder.instructor.cli import generated_release
from autograder.declare.exercise import grade_id_for
from autograder.judge.testcells import check_calls
from course.cuda import CudaModule

ROOT = nbtext.ROOT
CHAPTERS = nbtext.chapters()


def test_there_are_chapters():
    assert "ch01_softmax" in CHAPTERS


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_source_notebook_is_built_from_its_text(chapter):
    with open(nbtext.notebook_path(chapter)) as f:
        assert f.read() == nbtext.build(chapter), f"run `flashcourse build {chapter}`"


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_release_is_generated_from_source(chapter):
    with open(nbtext.notebook_path(chapter, "release")) as f:
        assert f.read() == generated_release(chapter), f"run `flashcourse generate {chapter}`"


@pytest.mark.parametrize("path", sorted(glob.glob(os.path.join(ROOT, "source", "*", "*.ipynb"))
                                        + glob.glob(os.path.join(ROOT, "release", "*", "*.ipynb"))))
def test_committed_notebooks_are_stamped_and_have_no_outputs(path):
    nb = nbformat.read(path, 4)
    assert "do not edit" in nb.metadata[nbtext.STAMP_KEY]["note"]
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None, path


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_every_exercise_has_its_cells(chapter):
    nb = nbformat.read(nbtext.notebook_path(chapter), 4)
    ids = {c.metadata.get("nbgrader", {}).get("grade_id") for c in nb.cells}
    calls = {call for c in nb.cells for call in check_calls(c.source)}
    for ex in registry.all_exercises():
        if ex.chapter != chapter:
            continue
        for chk in ex.checks:
            assert grade_id_for(ex.id, chk) in ids, f"{ex.id}: no test cell for {chk}"
            assert (ex.id, chk) in calls


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_release_hides_solutions_and_hidden_tests(chapter):
    nb = nbformat.read(nbtext.notebook_path(chapter, "release"), 4)
    text = "\n".join(c.source for c in nb.cells)
    assert "BEGIN SOLUTION" not in text and "BEGIN HIDDEN TESTS" not in text
    assert '"hidden")' not in text
    for c in nb.cells:
        if c.source.startswith("%%cuda") and c.metadata.get("nbgrader", {}).get("solution"):
            mod = CudaModule(c.source.split("\n", 1)[1])
            assert not mod.implemented, "a released CUDA exercise must be a stub"
            assert "Not implemented yet" in mod.summary()


def test_text_format_errors_are_clear():
    with pytest.raises(nbtext.NbTextError, match="unclosed"):
        nbtext.parse("```python\nx = 1\n", "t.md")
    with pytest.raises(nbtext.NbTextError, match="exercise= and points="):
        nbtext.parse("```python test\n```\n", "t.md")
