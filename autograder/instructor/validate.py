"""`flashcourse validate CH`: grade known submissions through nbgrader and compare with what
each must score.

Submissions: the solution (source notebook: full marks), the blank release (zero), and each
known-wrong submission of submissions/CH (the solution with one cell patched:
it loses exactly the test cells it names). Checks that cannot run in this mode (bandwidth and
throughput, bf16 cases, CUDA exercises marked needs_gpu) are expected to score zero, with the "needs a GPU" message;
without a GPU, a known-wrong submission that loses only such checks is not graded (it would score as the solution).
"""
from __future__ import annotations

import json
import os
import shutil
import tempfile
import time

import nbformat

from course import mode

from autograder.declare import registry
from autograder.declare.exercise import TIMED_CHECKS
from autograder.nbgrader.run import _course_copy, _nbgrader
from autograder.instructor.nbtext import notebook_path
from autograder.instructor.submissions import for_chapter
from autograder.judge.testcells import grade_cells


def _runs_here(exercise_id: str, check: str) -> bool:
    ex = registry.get(exercise_id)
    if mode.GPU:
        return not (check in TIMED_CHECKS and registry.awaits_calibration(exercise_id, check))
    return check not in TIMED_CHECKS and not ex.needs_gpu


_grade_cells = grade_cells  # (the name benchmarks/grade_class.py imports)


def validate(chapter: str, keep: str | None = None, only: list[str] | None = None) -> int:
    t0 = time.time()
    source = nbformat.read(notebook_path(chapter), 4)
    grades = grade_cells(source)
    subs: dict[str, tuple] = {}  # student -> (notebook, doc, lost cells)

    def runnable_points(gid: str) -> float:
        g = grades[gid]
        return g["points"] if all(_runs_here(e, c) for e, c in g["calls"]) else 0.0

    subs["solution"] = (source, "the reference solution", set())
    for w in for_chapter(chapter):
        nb = nbformat.from_dict(json.loads(json.dumps(source)))
        cell = next((c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == w.cell), None)
        if cell is None:
            raise SystemExit(f"{w.name}: no solution cell {w.cell!r} in {chapter}")
        cell.source = w.apply(cell.source)
        for gid in w.loses:
            if gid not in grades:
                raise SystemExit(f"{w.name}: LOSES names {gid!r}, which is not a test cell of {chapter}")
        label = w.name if w.legit else f"wrong-{w.name}"  # variant-...: a legitimate variant, full marks
        subs[label.replace("_", "-")] = (nb, w.doc, set(w.loses))

    # Without a GPU a known-wrong submission whose lost cells all need one would score exactly as the solution:
    # it is graded on a GPU only (named below; --only grades it anyway). Its patch was still applied above.
    gpu_only = [] if mode.GPU or only else sorted(
        k for k, (_, _, lost) in subs.items() if lost and not any(runnable_points(g) for g in lost))
    for k in gpu_only:
        del subs[k]
    unknown = sorted(set(only or ()) - set(subs) - {"blank"})
    if unknown:  # a misspelt name would otherwise validate less than asked, silently
        raise SystemExit(f"--only: no submission {', '.join(unknown)} in {chapter}; there are: blank, "
                         + ", ".join(sorted(subs)))
    subs = {k: v for k, v in subs.items() if not only or k in only}
    tmp = keep or tempfile.mkdtemp(prefix=f"validate-{chapter}-")
    try:
        if keep and os.path.exists(keep):
            shutil.rmtree(keep)
        os.makedirs(tmp, exist_ok=True)
        _course_copy(tmp, chapter)
        _nbgrader(["generate_assignment", chapter, "--force"], tmp)
        blank = nbformat.read(os.path.join(tmp, "release", chapter, f"{chapter}.ipynb"), 4)
        if not only or "blank" in only:
            subs["blank"] = (blank, "the release as students get it", set(grades))
        for student, (nb, _, _) in subs.items():
            d = os.path.join(tmp, "submitted", student, chapter)
            os.makedirs(d, exist_ok=True)
            nbformat.write(nb, os.path.join(d, f"{chapter}.ipynb"))
        print(f"autograding {len(subs)} submissions of {chapter} in {mode.MODE} mode ...", flush=True)
        if gpu_only:
            print(f"not graded here ({len(gpu_only)}: they lose only checks that need a GPU, so they would score as "
                  f"the solution): {', '.join(gpu_only)}", flush=True)
        # as an instructor grades a class: worker judges in parallel, then one writer records the results
        # through nbgrader's autograde (autograder.instructor.classgrade)
        import io

        from autograder.instructor.classgrade import grade_class, record_and_summarise
        results, _ = grade_class(tmp, chapter, force=True)
        said = io.StringIO()
        # collect's replay and summary; the assignment is in the gradebook already (generate_assignment above)
        if record_and_summarise(os.path.abspath(tmp), chapter, results, out=said) != 0:
            print(said.getvalue()[-3000:], flush=True)
        got = _scores(tmp, chapter)
    finally:
        if not keep:
            shutil.rmtree(tmp, ignore_errors=True)

    rows, bad = [], 0
    for student, (_, doc, lost) in subs.items():
        for gid in grades:
            want = 0.0 if gid in lost else runnable_points(gid)
            have = got.get(student, {}).get(gid)
            ok = have is not None and abs(have - want) < 1e-9
            bad += not ok
            rows.append({"student": student, "cell": gid, "expected": want, "got": have, "ok": ok,
                         "runs_here": runnable_points(gid) > 0 or grades[gid]["points"] == 0})
    _print(chapter, rows, subs, grades, time.time() - t0)
    out = os.environ.get("FLASHCOURSE_VALIDATE_JSON")
    if out:
        with open(out, "w") as f:
            json.dump({"chapter": chapter, "mode": mode.MODE, "device": mode.device_name(), "rows": rows}, f, indent=1)
    return bad


def _scores(course_dir: str, chapter: str) -> dict:
    from nbgrader.api import Gradebook
    out: dict = {}
    with Gradebook(f"sqlite:///{os.path.join(course_dir, 'gradebook.db')}") as gb:
        for sub in gb.assignment_submissions(chapter):
            nb = sub.notebooks[0]
            out[sub.student.id] = {g.name: float(g.auto_score or 0) for g in nb.grades}
    return out


def _print(chapter, rows, subs, grades, seconds) -> None:
    print(f"\nflashcourse validate {chapter} · {mode.MODE} mode · {mode.device_name()}")
    cells = list(grades)
    width = max(len(s) for s in subs) + 2
    print(" " * width + "  ".join(f"{c[:24]:>24}" for c in cells))
    by = {(r["student"], r["cell"]): r for r in rows}
    for s in subs:
        line = f"{s:<{width}}"
        for c in cells:
            r = by[(s, c)]
            got = "-" if r["got"] is None else f"{r['got']:g}"
            mark = (" gpu" if not r["runs_here"] else "") + ("" if r["ok"] else " ✗")
            line += "  " + f"{got}/{r['expected']:g}{mark}".rjust(24)
        print(line)
    n_bad = sum(not r["ok"] for r in rows)
    print(f"(got/expected points per test cell; 'gpu': the check needs a GPU, so 0 is expected here) "
          f"{len(rows) - n_bad} match, {n_bad} mismatch; {seconds:.0f} s")
