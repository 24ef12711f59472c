"""`flashcourse validate` end to end through nbgrader, in the current mode (CPU in CI): the solution scores full
on every check this mode can run, the blank release scores zero, and known submissions lose exactly the test
cells they target.

Through nbgrader, every test cell of the notebook: the solution, the blank release, every legitimate variant,
every attack (they aim at the grading pipeline itself), and per exercise one known-wrong submission of it.
The chapter's other known-wrong submissions (about two thirds of them) are judged on the test cells they can
change only (`judge_known_wrongs`: the same judge and sandboxed runner, without nbgrader and without the
other exercises' checks, which grade the same patched notebook's untouched cells). `flashcourse validate CH`
grades all of them through nbgrader; tests/gpu_run.sh does that on a GPU."""
import pytest

from autograder.instructor.nbtext import chapters
from autograder.instructor.validate import graded_here, judge_known_wrongs, label, validate


def split(chapter: str) -> tuple[list[str], list[str]]:
    """(graded through nbgrader, judged on their own exercises only): labels of the chapter's known submissions."""
    e2e, focused, seen = ["solution", "blank"], [], set()
    for w in graded_here(chapter):
        plain_wrong = not (w.legit or w.name.startswith("attack_"))
        if plain_wrong and w.exercise in seen:
            focused.append(label(w))
        else:
            e2e.append(label(w))
            seen |= {w.exercise} if plain_wrong else set()
    return e2e, focused


@pytest.mark.slow
@pytest.mark.parametrize("chapter", chapters())
def test_validate(chapter, capsys):
    e2e, _ = split(chapter)
    mismatches = validate(chapter, only=e2e)
    out = capsys.readouterr().out
    print(out)
    assert mismatches == 0, out


@pytest.mark.slow
@pytest.mark.parametrize("chapter", chapters())
def test_known_wrongs_lose_their_cells(chapter, capsys):
    _, focused = split(chapter)
    if not focused:
        pytest.skip(f"every known-wrong submission of {chapter} graded here is in test_validate")
    mismatches = judge_known_wrongs(chapter, focused)
    out = capsys.readouterr().out
    print(out)
    assert mismatches == 0, out


def test_the_split_keeps_every_submission_and_one_wrong_per_exercise_end_to_end():
    for chapter in chapters():
        e2e, focused = split(chapter)
        here = {label(w) for w in graded_here(chapter)}
        assert set(e2e) | set(focused) == here | {"solution", "blank"} and not set(e2e) & set(focused)
        wrong = {w.exercise for w in graded_here(chapter) if not w.legit and not w.name.startswith("attack_")}
        through = {w.exercise for w in graded_here(chapter) if label(w) in e2e and not w.legit}
        assert wrong <= through, (chapter, wrong - through)
