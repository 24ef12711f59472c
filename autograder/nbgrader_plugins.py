"""nbgrader plugins, registered by nbgrader_config.py.

ClearSolutionsCuda: in %%cuda cells a solution region becomes a CUDA stub
    (`NOT_IMPLEMENTED();`), which the %%cuda magic reports as "not implemented yet"
    instead of handing NVRTC a Python `raise`.
IsolatedRegrade: runs after nbgrader executes a submission. For every test cell that
    calls `check(exercise, check)` the judge (this process) runs that check on the
    notebook's own solution cells, executed once in a warm runner process, and writes
    the verdict as the cell's output. The grade never depends on the state of the
    executed notebook, nor on anything the runner says: the judge makes the inputs and
    references and verifies the outputs itself. A crash or hang costs only its checks.
"""
from __future__ import annotations

import ast
import nbformat
from nbgrader.preprocessors import ClearSolutions, NbGraderPreprocessor
from nbgrader.utils import is_grade

CUDA_STUB = "// YOUR CODE HERE\nNOT_IMPLEMENTED();"


class ClearSolutionsCuda(ClearSolutions):
    def _replace_solution_region(self, cell, language):
        if cell.cell_type == "code" and cell.source.lstrip().startswith("%%cuda"):
            saved = self.code_stub
            self.code_stub = {**saved, "cuda": CUDA_STUB}
            try:
                return super()._replace_solution_region(cell, "cuda")
            finally:
                self.code_stub = saved
        return super()._replace_solution_region(cell, language)


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


class IsolatedRegrade(NbGraderPreprocessor):
    """Grade a submission without executing it in nbgrader's process: the judge (this process) runs
    every check() of the test cells on the solution cells, which a sandboxed runner executes once.
    It replaces nbgrader's Execute step: under the solution cells it writes what they printed (or
    why they failed) in the runner, under each test cell the verdict. A grade cell that is not a
    check() call cannot be graded without executing it in nbgrader's process, so it scores zero
    with a message saying so (every test cell of this course is a check() call)."""

    def preprocess(self, nb, resources):
        import os
        replaying = os.environ.get("FLASHCOURSE_REPLAY")
        if replaying:  # `flashcourse collect`: the judge graded already (classgrade); record its results
            from .classgrade import replay
            return replay(nb, resources, replaying)
        from .exercise import TIMED_CHECKS
        from .runner import Session
        from .submission import solution_cells

        from . import sandbox
        ok, why = sandbox.status()
        if not ok:
            self.log.warning("flashcourse: NO SANDBOX around student code: %s", why)
        pairs = solution_cells(nb)
        jobs = []
        for cell in nb.cells:
            if cell.cell_type == "code" and is_grade(cell):
                jobs.append((cell, check_calls(cell.source)))
        wanted = sorted({c for _, calls in jobs for c in calls})
        # one warm runner executes the notebook's cells once and serves every check; timed checks last
        order = [c for c in wanted if c[1] not in TIMED_CHECKS] + [c for c in wanted if c[1] in TIMED_CHECKS]
        results = {}
        with Session([c for _, c in pairs]) as session:
            for c in order:
                results[c] = session.check(c[0], c[1])
            feedback = session.cell_feedback()
        for i, (nb_cell, _) in enumerate(pairs):
            text = feedback.get(i, "")
            nb_cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=text)] if text else []
        for cell, calls in jobs:
            if not calls:
                msg = ("this test cell calls no check(): flashcourse grades test cells through check() only "
                       "(nbgrader's Execute step is replaced by the isolated grader)")
                cell.outputs = [nbformat.v4.new_output("error", ename="AssertionError", evalue=msg,
                                                       traceback=[f"AssertionError: {msg}"])]
                continue
            rs = [results[c] for c in calls]
            failed = [r for r in rs if not r.passed]
            for r in rs:
                self.log.info("%s [%s]: %s (%.1f s)", r.exercise, r.check, "pass" if r.passed else "FAIL", r.seconds)
            if failed:
                msg = "\n".join(f"{r.exercise} [{r.check}]: {r.message}" for r in failed)
                cell.outputs = [nbformat.v4.new_output("error", ename="AssertionError", evalue=msg,
                                                       traceback=[f"AssertionError: {msg}"])]
            else:
                text = "".join(f"✓ {r.exercise} [{r.check}]: {r.message}\n" for r in rs)
                cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=text)]
        return nb, resources
