"""`check(exercise_id, check_name)`: the one line a test cell runs.

It gathers the exercise's names (and what they use) from the notebook, runs the
check in a fresh process, prints one line when it passes and raises AssertionError
with what to fix when it fails. It writes nothing to stderr (nbgrader would zero
the cell). Under `flashcourse autograde`, the grade comes from the same checks run
on the notebook file itself (see autograder.nbgrader_plugins), so nothing a notebook
does to this process can change it.
"""
from __future__ import annotations

import os
import sys

AUTOGRADE_ENV = "FLASHCOURSE_AUTOGRADE"


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


def check(exercise_id: str, check_name: str = "correctness", namespace: dict | None = None) -> None:
    from . import registry
    from .runner import run_check
    from .submission import MissingName, cells_from_namespace

    ex = registry.get(exercise_id)
    if os.environ.get(AUTOGRADE_ENV) == "1":
        print(f"{exercise_id} [{check_name}]: graded from the notebook file by the isolated grader")
        return None
    ns = namespace if namespace is not None else _caller_namespace()
    try:
        cells = cells_from_namespace(ns, ex.entry)
    except MissingName as e:
        raise AssertionError(f"{ex.title}: {e}") from None
    r = run_check(exercise_id, check_name, cells)
    if not r.passed:
        raise AssertionError(f"{ex.title} [{check_name}]: {r.message}")
    print(f"✓ {ex.title} [{check_name}]: {r.message}")  # printed, not returned: shown once in a cell
