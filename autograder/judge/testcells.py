"""Grading a notebook's test cells: the one loop that class grading (classgrade), nbgrader's IsolatedRegrade and
validate share.

A test cell is graded through the `check(exercise, check)` calls in its source (read with `ast`, never run). Every
check any test cell calls runs once, quiet checks first and timed ones last, in one Session (one warm sandboxed
runner that loaded the notebook's solution cells); a cell passes when every check it calls passed.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass

from autograder.declare.exercise import TIMED_CHECKS
from autograder.judge.gpulock import GpuTurns
from autograder.judge.verdict import NEEDS_GPU, Kind, Verdict, not_graded

NO_CHECK = ("this test cell calls no check(): flashcourse grades test cells through check() only (nbgrader's "
            "Execute step is replaced by the isolated grader)")


def check_calls(source: str) -> list[tuple[str, str]]:
    """The (exercise, check) pairs of the `check(...)` calls in a test cell."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    calls = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            f = node.func
            name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
            args = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
            if name == "check" and args:
                calls.append((args[0], args[1] if len(args) > 1 else "correctness"))
    return calls


def is_test_cell(cell) -> bool:
    meta = cell.get("metadata", {}).get("nbgrader", {})
    return cell.get("cell_type") == "code" and bool(meta.get("grade")) and not meta.get("solution")


def grade_cells(nb) -> dict[str, dict]:
    """grade_id -> {"calls": [(exercise, check)], "points": float, "source": str} for a notebook's test cells (of
    the instructor's notebook: the one the gradebook was made from)."""
    out = {}
    for c in nb.cells:
        if is_test_cell(c):
            meta = c["metadata"]["nbgrader"]
            out[meta["grade_id"]] = {"calls": check_calls(c.source), "points": float(meta.get("points", 0)),
                                     "source": c.source}
    return out


@dataclass(frozen=True)
class CellVerdict:
    """A test cell's verdict: passed when every check it calls passed; its text, as its output shows it."""
    passed: bool
    text: str
    not_graded: bool  # one of its checks could not be graded on this machine
    calls: tuple = ()

    def to_json(self) -> dict:
        return {"passed": self.passed, "text": self.text, "not_graded": self.not_graded,
                "calls": [list(c) for c in self.calls]}


def cell_verdict(calls: list[tuple[str, str]], verdicts: dict[tuple, Verdict]) -> CellVerdict:
    if not calls:
        return CellVerdict(False, NO_CHECK, False)
    rs = [verdicts[c] for c in calls]
    failed = [f"{v.exercise} [{v.check}]: {v.render()}" for v in rs if not v.passed]
    text = "\n".join(failed) if failed else "".join(f"✓ {v.exercise} [{v.check}]: {v.render()}\n" for v in rs)
    return CellVerdict(not failed, text, any(v.kind is Kind.NOT_GRADED for v in rs), tuple(calls))


@dataclass
class Graded:
    verdicts: dict[tuple, Verdict]  # (exercise, check) -> its verdict, in the order the checks ran
    cells: dict  # test cell (the caller's key: grade_id, or index) -> its CellVerdict
    printed: dict[int, str]  # solution cell index -> what it printed, or why it failed, in the runner (feedback)


def order(calls) -> list[tuple[str, str]]:
    """Every (exercise, check) once, sorted, quiet checks first: a timed check never waits behind a compile."""
    calls = sorted(set(calls))
    return [c for c in calls if c[1] not in TIMED_CHECKS] + [c for c in calls if c[1] in TIMED_CHECKS]


def grade(solutions: list, calls_of: dict, *, turns: GpuTurns | None = None, on_verdict=None) -> Graded:
    """Grade test cells (a key of the caller's, e.g. grade_id -> their check calls) on a notebook's solution
    cells (submission.Cell, in notebook order), in one Session. `turns`: the GPU's turns (classgrade: a timed
    check has the GPU alone); `on_verdict(verdict)`: called as each check ends. Timed checks on a machine
    without a GPU are not graded."""
    from course import mode

    from autograder.judge.session import Session
    turns = turns or GpuTurns(None)
    verdicts: dict[tuple, Verdict] = {}
    with Session(solutions) as s, turns:
        for ex_id, check in order(c for calls in calls_of.values() for c in calls):
            timed = check in TIMED_CHECKS
            if timed and not mode.GPU:
                v = not_graded(ex_id, check, NEEDS_GPU)
            else:
                with turns.for_check(timed):
                    v = s.check(ex_id, check)
            verdicts[(ex_id, check)] = v
            if on_verdict is not None:
                on_verdict(v)
        turns.close()  # the GPU is free again before the feedback is gathered
        with turns.for_check(False):  # a runner killed by the last check is started again: its cells may
            printed = s.cell_feedback()  # launch GPU work, so it loads under the shared lock, as in a check
    cells = {gid: cell_verdict(calls, verdicts) for gid, calls in calls_of.items()}
    return Graded(verdicts, cells, printed)
