"""`check(exercise_id, check_name)`: the one line a test cell runs.

It gathers the exercise's names (and what they use) from the notebook, runs the
check in a fresh process, prints one line when it passes and raises CheckFailed
(an AssertionError that shows only its message, no grader traceback) when it fails.
It writes nothing to stderr (nbgrader would zero the cell). In CPU mode, checks that
need a GPU print that they are skipped, so Run All completes on a laptop.

While nbgrader autogrades (it sets NBGRADER_EXECUTION=autograde around that pass, and
only then), the grade comes from the same checks run on the notebook file itself (see
autograder.nbgrader.plugins), so nothing a notebook does to its own kernel can change it.
"""
from __future__ import annotations

import os
import sys


WIDTH = 100  # columns a message is wrapped to, at spaces


def wrap(text: str, width: int = WIDTH) -> str:
    """A message wrapped at word boundaries (never inside a word: a longer word, a path or a number, stays whole),
    its continuation lines indented. JupyterLab's outputs wrap anywhere (`word-break: break-all`), so a long line
    wider than the output area was cut mid-word; lines this short fit the output area of a usual window."""
    import textwrap
    out = []
    for line in text.split("\n"):
        if len(line) <= width:
            out.append(line)
            continue
        indent = " " * (len(line) - len(line.lstrip()))
        out += textwrap.wrap(line, width, initial_indent="", subsequent_indent=indent + "  ", break_long_words=False,
                             break_on_hyphens=False, drop_whitespace=True) or [line]
    return "\n".join(out)


class CheckFailed(AssertionError):
    """A check's verdict: IPython shows the message alone, as the cell's error, wrapped at word boundaries."""

    def _render_traceback_(self) -> list[str]:  # IPython's hook for custom tracebacks
        lines = wrap("✗ " + str(self)).splitlines() or [""]
        return [f"\x1b[0;31m{lines[0]}\x1b[0m", *lines[1:]]


def _caller_namespace() -> dict:
    main = sys.modules.get("__main__")
    try:
        from IPython import get_ipython
        ip = get_ipython()
        if ip is not None:
            return ip.user_ns
    except ImportError:
        pass
    return vars(main) if main else {}


def grading() -> bool:
    """Whether nbgrader is autograding this notebook now (its own signal, read at call time)."""
    return os.environ.get("NBGRADER_EXECUTION") == "autograde"


def validating() -> bool:
    """Whether nbgrader's Validate runs this notebook now: then an unsolved exercise is an error, as it must be."""
    return os.environ.get("NBGRADER_EXECUTION") == "validate"


def _not_yet(title: str, check_name: str, why: str) -> None:
    """An exercise still holds its stub: while a student works (not under Validate), say so in one line and let
    Run All go on to the rest of the chapter; the grade is 0 for it all the same (grading runs the checks again)."""
    if validating():
        raise CheckFailed(f"{title} [{check_name}]: {why}")
    print(wrap(f"– {title} [{check_name}]: {why}. (0 points until it is solved; the rest of the notebook runs on.)"))


def check(exercise_id: str, check_name: str = "correctness", namespace: dict | None = None) -> None:
    from course import mode

    from autograder.declare import registry
    from autograder.declare.exercise import TIMED_CHECKS
    from autograder.judge.session import run_check
    from autograder.judge.verdict import Kind
    from autograder.declare.submission import MissingName, cells_from_namespace
    from course.errors import NotImplementedYet

    ex = registry.get(exercise_id)
    if check_name == "hidden" and "hidden" not in ex.checks:  # a student pack: no hidden cases here
        print(f"– {ex.title} [hidden]: hidden tests run only when your instructor grades your notebook.")
        return None
    if check_name not in ex.checks:
        raise KeyError(f"{exercise_id} has no check {check_name!r}; it has {', '.join(ex.checks)}")
    if grading():
        print(f"{exercise_id} [{check_name}]: graded from the notebook file by the isolated grader")
        return None
    if not mode.GPU and (check_name in TIMED_CHECKS or ex.needs_gpu):
        what = "speed is measured on a real GPU only" if check_name in TIMED_CHECKS else \
            "this kernel runs on a real GPU only"
        print(wrap(f"– {ex.title} [{check_name}]: skipped: needs a GPU ({what}; CPU mode). "
                   "It is graded on a GPU when your notebook is graded."))
        return None
    ns = namespace if namespace is not None else _caller_namespace()
    try:
        cells = cells_from_namespace(ns, ex.entry)
    except MissingName as e:
        raise CheckFailed(f"{ex.title} [{check_name}]: {e}") from None
    except NotImplementedYet as e:
        why = str(e) if "not implemented yet" in str(e) else f"not implemented yet: {e}"
        return _not_yet(ex.title, check_name, why)
    v = run_check(exercise_id, check_name, cells)
    if v.kind is Kind.NOT_IMPLEMENTED:
        return _not_yet(ex.title, check_name, v.render())
    if not v.passed:
        raise CheckFailed(f"{ex.title} [{check_name}]: {v.render()}")
    print(wrap(f"✓ {ex.title} [{check_name}]: {v.render()}"))  # printed, not returned: shown once in a cell
