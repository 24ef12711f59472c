"""`flashcourse validate` end to end through nbgrader, in the current mode (CPU in CI):
the solution scores full on every check this mode can run, the blank release scores zero, and
every known-wrong submission loses exactly the test cells it targets."""
import pytest

from autograder.instructor.nbtext import chapters
from autograder.instructor.validate import validate


@pytest.mark.slow
@pytest.mark.parametrize("chapter", chapters())
def test_validate(chapter, capsys):
    mismatches = validate(chapter)
    out = capsys.readouterr().out
    print(out)
    assert mismatches == 0, out
