"""nbgrader plugins, registered by nbgrader_config.py.

ClearSolutionsCuda: in %%cuda cells a solution region becomes a CUDA stub
    (`NOT_IMPLEMENTED();`), which the %%cuda magic reports as "not implemented yet"
    instead of handing NVRTC a Python `raise`.
IsolatedRegrade: runs after nbgrader executes a submission. For every test cell that
    calls `check(exercise, check)` it runs that check in a fresh worker process on the
    notebook's own solution cells, and writes the verdict as the cell's output. The
    grade therefore never depends on the state of the executed notebook: a crashed or
    hung kernel, a monkeypatched torch or grader, costs only the checks it fails.
"""
from __future__ import annotations

import ast
from concurrent.futures import ThreadPoolExecutor

import nbformat
from nbgrader.preprocessors import ClearSolutions, NbGraderPreprocessor
from nbgrader.utils import is_grade
from traitlets import Integer

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
    workers = Integer(2, help="checks run at once (timed checks always run alone)").tag(config=True)

    def preprocess(self, nb, resources):
        from .exercise import TIMED_CHECKS
        from .runner import run_check
        from .submission import cells_from_notebook

        cells = cells_from_notebook(nb)
        jobs = []
        for cell in nb.cells:
            if cell.cell_type == "code" and is_grade(cell):
                calls = check_calls(cell.source)
                if calls:
                    jobs.append((cell, calls))
        wanted = sorted({c for _, calls in jobs for c in calls})
        quiet = [c for c in wanted if c[1] not in TIMED_CHECKS]
        timed = [c for c in wanted if c[1] in TIMED_CHECKS]
        results = {}
        with ThreadPoolExecutor(max(1, self.workers)) as pool:
            for c, r in zip(quiet, pool.map(lambda c: run_check(c[0], c[1], cells), quiet)):
                results[c] = r
        for c in timed:
            results[c] = run_check(c[0], c[1], cells)
        for cell, calls in jobs:
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
